package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/gather"
	"github.com/topolayer/topolayer/routing"
)

// serverSet are the metadata fields the servers set, stripped before comparing.
var serverSet = []string{"uid", "resourceVersion", "managedFields", "creationTimestamp", "generation", "selfLink"}

func stripped(obj map[string]any) map[string]any {
	out := runtimeDeepCopy(obj)
	for _, f := range serverSet {
		unstructured.RemoveNestedField(out, "metadata", f)
	}
	return out
}

func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// TestGatherAfterApply places the inputs of the CAO case oauth-server-creation-minimal where
// the hosted topology keeps them (the operator's own Management/Configuration outputs through
// the hosted translation and apply into an HCP namespace of the test's own; the others
// directly on the guest), gathers them back and compares them with the input dir.
func TestGatherAfterApply(t *testing.T) {
	c := caoCase(t, "oauth-server-creation-minimal")
	const operator = corpus.CAO
	ctx := t.Context()
	inputs, err := contract.ParseInputResources(mustRead(t, c.InputResources))
	if err != nil {
		t.Fatal(err)
	}
	outputs, err := contract.ParseOutputResources(mustRead(t, c.OutputResources))
	if err != nil {
		t.Fatal(err)
	}
	original, err := contract.ReadInputDir(c.InputDir, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}

	mgmtCfg, guestCfg := hosted.Config(cluster.Management), hosted.Config(cluster.Guest)
	cfg, _ := ownHostedControlPlane(t, "gather")
	hcpNS := cfg.Topology.Hosted.Namespace
	topo := mustTopology(t, cfg)

	declared := map[string]bool{}
	for _, e := range inputs.ApplyConfigurationResources.ExactResources {
		declared[e.Group+"/"+e.Resource+"/"+e.Namespace+"/"+e.Name] = true
	}
	keyOf := func(id contract.Identity) string {
		return id.Group + "/" + id.Resource + "/" + id.Namespace + "/" + id.Name
	}

	guest, gdyn := clients(t, guestCfg)
	var management []contract.Mutation
	var expected []*contract.InputObject
	onManagement := map[string]bool{}
	for _, o := range original.Objects() {
		id := o.Identity()
		if !declared[keyOf(id)] {
			t.Logf("%s: in the input dir but not in input-resources: not gathered", id)
			continue
		}
		loc, err := topo.Locate(outputs, id)
		if err != nil {
			t.Fatal(err)
		}
		body := stripped(o.Object.Object)
		if loc.Cluster == routing.ClusterManagement {
			data, err := yaml.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			management = append(management, mutation(contract.ClassManagement, contract.ActionCreate,
				id.Group+"/"+id.Version+"/"+id.Resource, id.Namespace, id.Name, string(data)))
			expected = append(expected, o)
			onManagement[keyOf(id)] = true
			continue
		}
		if id.Namespace != "" {
			_, err := guest.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id.Namespace}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
		ri := gdyn.Resource(id.GroupVersionResource())
		var rc interface {
			Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error)
			Delete(context.Context, string, metav1.DeleteOptions, ...string) error
		} = ri
		if id.Namespace != "" {
			rc = ri.Namespace(id.Namespace)
		}
		obj := &unstructured.Unstructured{Object: body}
		_ = rc.Delete(ctx, id.Name, metav1.DeleteOptions{}) // a leftover of an earlier run
		if _, err := rc.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				t.Logf("%s: the guest does not serve %s: not placed, not compared", id, id.GroupResource())
				continue
			}
			t.Fatalf("create %s on the guest: %v", id, err)
		}
		t.Cleanup(func() { _ = rc.Delete(context.Background(), id.Name, metav1.DeleteOptions{}) })
		expected = append(expected, o)
	}

	plan := mustPlan(t, cfg, operator, outputs, management...)
	owner, err := hypershift.ResolveHostedControlPlane(ctx, mgmtCfg, hcpNS, "gather")
	if err != nil {
		t.Fatal(err)
	}
	mt, err := apply.NewClusterTarget(cluster.Management, mgmtCfg, apply.Options{Namespace: hcpNS, Operator: operator, HostedControlPlane: owner, RequireOwnership: true})
	if err != nil {
		t.Fatal(err)
	}
	gt, err := apply.NewClusterTarget(cluster.Guest, guestCfg, apply.Options{Operator: operator, RequireOwnership: true})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, plan, map[string]apply.Target{cluster.Management: mt, cluster.Guest: gt})
	t.Logf("placed %d objects on the management cluster (through the translation), %d on the guest", len(management), len(expected)-len(management))

	res, err := gather.Gather(ctx, gather.Options{Placement: mustTopology(t, cfg), Inputs: inputs, Outputs: outputs,
		Clusters: map[string]*rest.Config{routing.ClusterManagement: mgmtCfg, routing.ClusterGuest: guestCfg}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		t.Logf("warning: %s", w)
	}
	dir := filepath.Join(t.TempDir(), "gathered")
	if err := contract.WriteInputDir(dir, res.Objects); err != nil {
		t.Fatal(err)
	}
	back, err := contract.ReadInputDir(dir, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*contract.InputObject{}
	for _, o := range back.Objects() {
		got[keyOf(o.Identity())] = o
	}
	statusDropped := 0
	for _, o := range expected {
		id := o.Identity()
		g, ok := got[keyOf(id)]
		if !ok {
			t.Errorf("%s: not gathered", id)
			continue
		}
		want := stripped(o.Object.Object)
		if onManagement[keyOf(id)] {
			// Standalone ownerReferences name objects of the guest (the ClusterVersion's uid):
			// the hypershift profile drops them on the management cluster, where that uid
			// means nothing (or another tenant's object).
			unstructured.RemoveNestedField(want, "metadata", "ownerReferences")
		}
		have := stripped(g.Object.Object)
		if _, ok := have["status"]; !ok {
			if _, had := want["status"]; had {
				statusDropped++
				delete(want, "status") // the status subresource drops it on create
			}
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("%s: gathered differs from the input dir (-want +got):\n%s", id, diff)
		}
	}
	t.Logf("compared %d objects; %d lost their status on create (status subresource); gathered %d objects, %d not found", len(expected), statusDropped, len(res.Objects), len(res.Skipped))
	if !slices.ContainsFunc(back.Objects(), func(o *contract.InputObject) bool {
		return o.Identity().IsNamespace() && o.Object.GetName() == "openshift-authentication"
	}) {
		t.Errorf("the absorbed namespace openshift-authentication was not synthesized")
	}
	_ = os.RemoveAll(dir)
}

// TestGatherProjections: the configured projections, and only they, fill the config
// singletons an operator reads from the HostedControlPlane, when the guest has none.
func TestGatherProjections(t *testing.T) {
	ctx := t.Context()
	mgmtCfg, guestCfg := hosted.Config(cluster.Management), hosted.Config(cluster.Guest)
	base, _ := ownHostedControlPlane(t, "projections")
	h := base.Topology.Hosted
	_, mdyn := clients(t, mgmtCfg)
	hcp, err := mdyn.Resource(hypershift.HostedControlPlaneGVR()).Namespace(h.Namespace).Get(ctx, h.HostedControlPlane, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	configuration := map[string]any{
		"oauth":          map[string]any{"tokenConfig": map[string]any{"accessTokenMaxAgeSeconds": int64(3600)}},
		"authentication": map[string]any{"type": "IntegratedOAuth"},
	}
	if err := unstructured.SetNestedMap(hcp.Object, configuration, "spec", "configuration"); err != nil {
		t.Fatal(err)
	}
	if _, err := mdyn.Resource(hypershift.HostedControlPlaneGVR()).Namespace(h.Namespace).Update(ctx, hcp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Hosted\n  hosted: {namespace: " + h.Namespace + ", hostedControlPlane: " + h.HostedControlPlane + "}\n" +
		"gather:\n  projections:\n  - {group: config.openshift.io, version: v1, resource: oauths, kind: OAuth, name: cluster, field: spec, from: spec.configuration.oauth}\n"))
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := contract.ParseInputResources([]byte("applyConfigurationResources:\n  exactResources:\n" +
		"  - {group: config.openshift.io, version: v1, resource: oauths, name: cluster}\n" +
		"  - {group: config.openshift.io, version: v1, resource: authentications, name: cluster}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := gather.Gather(ctx, gather.Options{Placement: mustTopology(t, cfg), Inputs: inputs,
		Clusters: map[string]*rest.Config{routing.ClusterManagement: mgmtCfg, routing.ClusterGuest: guestCfg}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Projected) != 1 || res.Projected[0].Resource != "oauths" {
		t.Fatalf("projected %v, want only oauths/cluster (authentications is not configured)", res.Projected)
	}
	for _, o := range res.Objects {
		if o.Resource == "authentications" {
			t.Errorf("authentications/cluster gathered, but no projection names it and the guest has none")
		}
		if o.Resource != "oauths" {
			continue
		}
		got, _, _ := unstructured.NestedInt64(o.Object.Object, "spec", "tokenConfig", "accessTokenMaxAgeSeconds")
		if got != 3600 || o.Object.GetKind() != "OAuth" || o.Object.GetAPIVersion() != "config.openshift.io/v1" {
			t.Errorf("projected oauths/cluster = %v", o.Object.Object)
		}
	}
}
