package gather

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// hostedNames are the names of hostedYAML.
func hostedNames(t *testing.T) namespaces.Hosted {
	t.Helper()
	h := namespaces.Hosted{Namespace: "hcp", Aliases: []namespaces.Alias{{
		Source: contract.Identity{Resource: "secrets", Namespace: "openshift-authentication", Name: "serving"}, Name: "oauth-server-crt",
	}}}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	return h
}

// hostedPlacement is a hosted Placement whose inputs all live on the guest (topology.Topology
// is the real one; it imports this package).
type hostedPlacement struct{ names namespaces.Hosted }

func (hostedPlacement) Clusters() []string {
	return []string{routing.ClusterManagement, routing.ClusterGuest}
}
func (hostedPlacement) Home() string { return routing.ClusterManagement }
func (p hostedPlacement) Bound(cluster string) string {
	if cluster == routing.ClusterManagement {
		return p.names.Namespace
	}
	return ""
}
func (p hostedPlacement) Names() namespaces.Mapper { return p.names }
func (hostedPlacement) Locate(_ *contract.OutputResources, id contract.Identity) (Location, error) {
	return Location{Cluster: routing.ClusterGuest, Identity: id}, nil
}
func (hostedPlacement) HostedControlPlane() (contract.Identity, bool) {
	return contract.Identity{}, false
}
func (hostedPlacement) Projections() []Projection { return nil }

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestStandaloneFromManagement maps an object as apply leaves it on the management cluster
// back to its standalone form.
func TestStandaloneFromManagement(t *testing.T) {
	names := hostedNames(t)
	g := &gatherer{opts: Options{Placement: hostedPlacement{names}}, names: names, inverse: translate.Inverse{Names: names}, seen: map[contract.Key]*contract.InputObject{}, fromManagement: map[string]bool{}, absorbed: map[string]bool{}}
	src := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-authentication", Name: "audit"}
	target, err := names.ToTarget(routing.ClusterManagement, src)
	if err != nil {
		t.Fatal(err)
	}
	live := object(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: `+target.Name+`
  namespace: hcp
  uid: 1234
  resourceVersion: "7"
  generation: 2
  creationTimestamp: "2024-01-01T00:00:00Z"
  managedFields: [{manager: topolayer}]
  labels: {app: oauth, topolayer.dev/operator: cao}
  ownerReferences:
  - {apiVersion: hypershift.openshift.io/v1beta1, kind: HostedControlPlane, name: example, uid: abc}
  - {apiVersion: v1, kind: ConfigMap, name: other, uid: def}
data: {policy: x}
status: {kept: true}
`)
	live.SetAnnotations(namespaces.SourceAnnotations(src))
	o, got, err := g.standalone(routing.ClusterManagement, target, live)
	if err != nil {
		t.Fatal(err)
	}
	if got.Key() != src.Key() {
		t.Fatalf("identity %s, want %s", got, src)
	}
	g.add(routing.ClusterManagement, o)
	g.synthesizeNamespaces()
	want := object(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: audit
  namespace: openshift-authentication
  resourceVersion: "7"
  creationTimestamp: "2024-01-01T00:00:00Z"
  labels: {app: oauth}
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: other, uid: def}
data: {policy: x}
status: {kept: true}
`)
	if g, _, _ := unstructured.NestedFieldNoCopy(o.Object.Object, "metadata", "generation"); fmt.Sprint(g) != "2" {
		t.Errorf("generation %v, want the live object's 2 (kept, as a must-gather keeps it)", g)
	}
	unstructured.RemoveNestedField(o.Object.Object, "metadata", "generation")
	if diff := cmp.Diff(want.Object, o.Object.Object); diff != "" {
		t.Errorf("standalone form (-want +got):\n%s", diff)
	}
	if len(g.res.Objects) != 2 || !g.res.Objects[1].Identity().IsNamespace() || g.res.Objects[1].Object.GetName() != "openshift-authentication" {
		t.Errorf("objects %v, want the configmap and its synthesized namespace", g.res.Objects)
	}
	dir := t.TempDir() + "/in"
	if err := contract.WriteInputDir(dir, g.res.Objects); err != nil {
		t.Fatal(err)
	}
	read, err := contract.ReadInputDir(dir, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(read.Objects()); n != 2 {
		t.Errorf("read back %d objects, want 2", n)
	}
}

func TestProjectValue(t *testing.T) {
	p := Projection{Target: contract.Identity{Group: "config.openshift.io", Version: "v1", Resource: "authentications", Name: "cluster"}, Kind: "Authentication", Field: []string{"spec"}, From: []string{"spec", "configuration", "authentication"}}
	obj, err := ProjectValue(p, map[string]any{"type": "OIDC"})
	if err != nil {
		t.Fatal(err)
	}
	want := object(t, "apiVersion: config.openshift.io/v1\nkind: Authentication\nmetadata: {name: cluster}\nspec: {type: OIDC}\n")
	if diff := cmp.Diff(want.Object, obj.Object); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestGatherNeedsClusters(t *testing.T) {
	_, err := Gather(t.Context(), Options{Placement: hostedPlacement{hostedNames(t)}, Inputs: &contract.InputResources{}})
	if err == nil {
		t.Fatal("no error without client configurations")
	}
}

// mapReader is a Reader over objects in memory, by identity (version ignored).
type mapReader map[contract.Key]*unstructured.Unstructured

func (r mapReader) Get(_ context.Context, id contract.Identity) (*unstructured.Unstructured, error) {
	if o, ok := r[id.Key()]; ok {
		return o.DeepCopy(), nil
	}
	return nil, nil
}

func (mapReader) List(context.Context, schema.GroupVersionResource, string, string) ([]*unstructured.Unstructured, error) {
	return nil, nil
}

func (mapReader) Namespaced(schema.GroupVersionResource) (bool, error) { return false, nil }

// splitPlacement reads every input from the guest, its status from the management shadow.
type splitPlacement struct{ hostedPlacement }

func (p splitPlacement) Locate(_ *contract.OutputResources, id contract.Identity) (Location, error) {
	shadow, err := p.names.ToTarget(routing.ClusterManagement, id)
	return Location{Cluster: routing.ClusterGuest, Identity: id, Status: &Location{Cluster: routing.ClusterManagement, Identity: shadow}}, err
}

func TestGatherSpecFromUsersStatusFromOperator(t *testing.T) {
	names := hostedNames(t)
	ingress := contract.Identity{Group: "config.openshift.io", Version: "v1", Resource: "ingresses", Name: "cluster"}
	shadow, err := names.ToTarget(routing.ClusterManagement, ingress)
	if err != nil {
		t.Fatal(err)
	}
	userSpec := object(t, "apiVersion: config.openshift.io/v1\nkind: Ingress\nmetadata: {name: cluster}\nspec: {domain: apps.user.example}\n")
	written := object(t, "apiVersion: config.openshift.io.shadow.topolayer.dev/v1\nkind: Ingress\nmetadata: {name: cluster, namespace: hcp}\n"+
		"spec: {domain: apps.stale.example}\nstatus: {componentRoutes: [{name: oauth-openshift, namespace: openshift-authentication}]}\n")
	written.SetAnnotations(namespaces.SourceAnnotations(ingress))
	inputs := &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{ExactResources: []contract.ExactResourceID{
		{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: ingress.Group, Version: "v1", Resource: ingress.Resource}, Name: ingress.Name},
	}}}
	tests := []struct {
		name       string
		guest, mgm mapReader
		wantDomain string
		wantStatus bool
	}{
		{"both: the user's spec, the operator's status", mapReader{ingress.Key(): userSpec}, mapReader{shadow.Key(): written}, "apps.user.example", true},
		{"no status written yet: the user's object", mapReader{ingress.Key(): userSpec}, mapReader{}, "apps.user.example", false},
		{"not on the guest: the written object whole", mapReader{}, mapReader{shadow.Key(): written}, "apps.stale.example", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Gather(t.Context(), Options{
				Placement: splitPlacement{hostedPlacement{names}}, Inputs: inputs,
				Readers: map[string]Reader{routing.ClusterGuest: tc.guest, routing.ClusterManagement: tc.mgm},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Objects) != 1 {
				t.Fatalf("gathered %d objects, want 1 (skipped %v, warnings %v)", len(res.Objects), res.Skipped, res.Warnings)
			}
			o := res.Objects[0].Object
			if got, _, _ := unstructured.NestedString(o.Object, "spec", "domain"); got != tc.wantDomain {
				t.Errorf("spec.domain = %q, want %q", got, tc.wantDomain)
			}
			if _, has := o.Object["status"]; has != tc.wantStatus {
				t.Errorf("status present = %v, want %v", has, tc.wantStatus)
			}
			if o.GetAPIVersion() != "config.openshift.io/v1" || o.GetNamespace() != "" {
				t.Errorf("not in standalone form: %s %s/%s", o.GetAPIVersion(), o.GetNamespace(), o.GetName())
			}
		})
	}
}
