package e2e

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/namespaces"
)

// hcpResources are the types the sample operators write in the HCP namespace, apart from
// their shadow ClusterOperators.
var hcpResources = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "services"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// placedResources are the resources the sample operators' outputs land in, hosted: in the
// HCP namespace of the management cluster, and cluster-scoped on the guest.
var placedResources = map[string][]schema.GroupVersionResource{
	cluster.Management: append(slices.Clip(hcpResources),
		schema.GroupVersionResource{Group: namespaces.ShadowGroup("config.openshift.io"), Version: "v1", Resource: "clusteroperators"}),
	cluster.Guest: {
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	},
}

// placedSelector selects the objects of both sample operators.
const placedSelector = namespaces.LabelOperator + " in (" + sampleOp + "," + auditOp + ")"

// placedClient is the client of one of placedResources where the outputs land.
type placedClient struct {
	cluster string
	gvr     schema.GroupVersionResource
	ri      dynamic.ResourceInterface
}

// placedClients returns a client for every cluster and resource of placedResources: in the
// HCP namespace hcpNS on the management cluster, cluster-wide on the guest.
func placedClients(t *testing.T, hcpNS string) []placedClient {
	t.Helper()
	var out []placedClient
	for clusterName, gvrs := range placedResources {
		_, dyn := clients(t, hosted.Config(clusterName))
		for _, gvr := range gvrs {
			var ri dynamic.ResourceInterface = dyn.Resource(gvr)
			if clusterName == cluster.Management {
				ri = dyn.Resource(gvr).Namespace(hcpNS)
			}
			out = append(out, placedClient{cluster: clusterName, gvr: gvr, ri: ri})
		}
	}
	return out
}

// placed lists what the sample operators wrote (objects labelled with their names) on the
// hosted environment, keyed cluster/resource/namespace/name. Each object is normalized to
// what both runs must agree on: without the fields the server sets and without timestamps.
func placed(t *testing.T, hcpNS string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, pc := range placedClients(t, hcpNS) {
		clusterName, gvr := pc.cluster, pc.gvr
		list, err := pc.ri.List(t.Context(), metav1.ListOptions{LabelSelector: placedSelector})
		if err != nil {
			t.Fatalf("%s: list %s: %v", clusterName, gvr.Resource, err)
		}
		for _, o := range list.Items {
			if gvr.Resource == "configmaps" && (o.GetName() == manager.StatusName(sampleOp) || o.GetName() == manager.StatusName(auditOp)) {
				continue // topolayer's record of its runs, not an output
			}
			obj := o.DeepCopy().Object
			if gvr.Resource == "services" {
				// Allocated by the server on creation.
				unstructured.RemoveNestedField(obj, "spec", "clusterIP")
				unstructured.RemoveNestedField(obj, "spec", "clusterIPs")
			}
			md := obj["metadata"].(map[string]any)
			for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
				delete(md, k)
			}
			if o.GetLabels()[guestidentity.LabelGuestKubeconfig] == "true" {
				// A guest kubeconfig holds a token the guest issued at the time of the
				// write: the same Secret, not the same bytes.
				delete(obj, "data")
				annotations := md["annotations"].(map[string]any)
				delete(annotations, guestidentity.AnnotationExpires)
				delete(annotations, guestidentity.AnnotationRefresh)
			}
			dropTimestamps(obj)
			out[strings.Join([]string{clusterName, gvr.Resource, o.GetNamespace(), o.GetName()}, "/")] = obj
		}
	}
	return out
}

// dropTimestamps removes the condition timestamps that every run sets from its own clock.
func dropTimestamps(v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range []string{"lastTransitionTime", "lastUpdateTime", "lastHeartbeatTime"} {
			delete(v, k)
		}
		for _, e := range v {
			dropTimestamps(e)
		}
	case []any:
		for _, e := range v {
			dropTimestamps(e)
		}
	}
}

// removePlaced deletes what placed lists, and waits until it is gone.
func removePlaced(t *testing.T, hcpNS string) {
	t.Helper()
	for _, pc := range placedClients(t, hcpNS) {
		err := pc.ri.DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: placedSelector})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("%s: delete %s: %v", pc.cluster, pc.gvr.Resource, err)
		}
	}
	eventually(t, "the sample operators' objects gone", func(context.Context) (bool, error) {
		return len(placed(t, hcpNS)) == 0, nil
	})
}

// TestHostedEmbedding runs examples/hosted-embedding, a control-plane-operator in miniature
// that embeds topolayer with manager.AddToManager and links the sample operators in
// (--in-process: they run in memory, over the objects gathered from the caches), against the
// hosted environment, and then topolayer run with the same configuration on the same inputs,
// running the operators' binaries: both place the same objects.
func TestHostedEmbedding(t *testing.T) {
	h := newHostedSample(t)
	kubectl(t, cluster.KubeconfigFile(h.kubeDir, cluster.Guest), "create", "configmap", "sample-settings", "-n", "openshift-config", "--from-literal=replicas=2", "--from-literal=message=embedded")
	cfgFile := demoConfig(t, "hosted-demo.yaml", nil)
	kubeconfigs := hostedKubeconfigFlags(h.kubeDir)

	// converge starts a program, waits until both operators have run and nothing is left to
	// do, and returns what is placed.
	mgmtCS, _ := clients(t, hosted.Config(cluster.Management))
	converge := func(name string, inProcess bool, p *runProcess) map[string]map[string]any {
		t.Helper()
		eventually(t, name+": the first runs", func(context.Context) (bool, error) {
			return p.runs(t, sampleOp)[manager.TriggerStart] >= 1 && p.runs(t, auditOp)[manager.TriggerStart] >= 1, nil
		})
		settle(t, p, sampleOp, auditOp)
		p.stop(t)
		for _, op := range []string{sampleOp, auditOp} {
			st, err := mgmtCS.CoreV1().ConfigMaps(h.hcpNS).Get(t.Context(), manager.StatusName(op), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var rec manager.RunRecord
			if err := yaml.Unmarshal([]byte(st.Data["status.yaml"]), &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Result != manager.ResultSucceeded || (rec.Sandbox == "in-process") != inProcess {
				t.Errorf("%s: the last run of %s: %s in sandbox %q, want %s, in process: %t", name, op, rec.Result, rec.Sandbox, manager.ResultSucceeded, inProcess)
			}
		}
		got := placed(t, h.hcpNS)
		if len(got) == 0 {
			t.Fatalf("%s placed nothing", name)
		}
		return got
	}

	removePlaced(t, h.hcpNS)
	embedded := converge("hosted-embedding", true, startProcess(t, binary(t, "hosted-embedding"), append([]string{"--config", cfgFile, "--in-process"}, kubeconfigs...)...))
	removePlaced(t, h.hcpNS)
	run := converge("topolayer run", false, startRun(t, append([]string{"--config", cfgFile}, kubeconfigs...)...))

	t.Logf("hosted-embedding and topolayer run each placed %d objects", len(embedded))
	for key, want := range run {
		got, ok := embedded[key]
		switch {
		case !ok:
			t.Errorf("%s: placed by topolayer run, not by the embedding", key)
		case !reflect.DeepEqual(got, want):
			g, _ := yaml.Marshal(got)
			w, _ := yaml.Marshal(want)
			t.Errorf("%s differs:\nembedding:\n%s\ntopolayer run:\n%s", key, g, w)
		}
	}
	for key := range embedded {
		if _, ok := run[key]; !ok {
			t.Errorf("%s: placed by the embedding, not by topolayer run", key)
		}
	}
}
