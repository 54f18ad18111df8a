package gather

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

const hostedYAML = `apiVersion: topolayer.dev/v1alpha1
kind: TopologyConfig
topology:
  type: Hosted
  hosted: {namespace: hcp, hostedControlPlane: example}
namespaces:
  aliases:
  - {group: "", resource: secrets, namespace: openshift-authentication, name: serving, hostedName: oauth-server-crt}
`

func mustConfig(t *testing.T, doc string) *config.TopologyConfig {
	t.Helper()
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func exact(group, resource, ns, name string) contract.ExactResourceID {
	return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: group, Version: "v1", Resource: resource}, Namespace: ns, Name: name}
}

func TestPlace(t *testing.T) {
	hosted := mustConfig(t, hostedYAML)
	dropped := mustConfig(t, hostedYAML+`routing:
  rules:
  - name: keep-cms-on-guest
    match: {class: Management, group: "", resource: configmaps}
    disposition: dropped
`)
	standalone := mustConfig(t, "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology: {type: Standalone}\n")
	names, err := HostedNames(hosted)
	if err != nil {
		t.Fatal(err)
	}
	outputs := &contract.OutputResources{
		ConfigurationResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{exact("config.openshift.io", "ingresses", "", "cluster")}},
		ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
			exact("operator.openshift.io", "authentications", "", "cluster"),
			exact("", "configmaps", "openshift-authentication", "audit"),
			exact("", "secrets", "openshift-authentication", "serving"),
			exact("", "namespaces", "", "openshift-authentication"),
		}},
		UserWorkloadResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{exact("rbac.authorization.k8s.io", "clusterroles", "", "reader")}},
	}
	id := func(group, resource, ns, name string) contract.Identity {
		return contract.Identity{Group: group, Version: "v1", Resource: resource, Namespace: ns, Name: name}
	}
	audit := id("", "configmaps", "openshift-authentication", "audit")
	auditTarget, _ := names.ToTarget(routing.ClusterManagement, audit)
	tests := []struct {
		name    string
		cfg     *config.TopologyConfig
		outputs *contract.OutputResources
		id      contract.Identity
		want    Location
	}{
		{"standalone keeps everything", standalone, outputs, audit, Location{Cluster: routing.ClusterStandalone, Identity: audit}},
		{"not written: guest", hosted, outputs, id("config.openshift.io", "infrastructures", "", "cluster"), Location{Cluster: routing.ClusterGuest, Identity: id("config.openshift.io", "infrastructures", "", "cluster")}},
		{"management output: shadow", hosted, outputs, id("operator.openshift.io", "authentications", "", "cluster"),
			Location{Cluster: routing.ClusterManagement, Identity: id("operator.openshift.io.shadow.topolayer.dev", "authentications", "hcp", "cluster")}},
		{"configuration output: management", hosted, outputs, id("config.openshift.io", "ingresses", "", "cluster"),
			Location{Cluster: routing.ClusterManagement, Identity: id("config.openshift.io.shadow.topolayer.dev", "ingresses", "hcp", "cluster")}},
		{"namespaced output: encoded", hosted, outputs, audit, Location{Cluster: routing.ClusterManagement, Identity: auditTarget}},
		{"aliased output", hosted, outputs, id("", "secrets", "openshift-authentication", "serving"),
			Location{Cluster: routing.ClusterManagement, Identity: id("", "secrets", "hcp", "oauth-server-crt")}},
		{"namespace output: absorbed", hosted, outputs, id("", "namespaces", "", "openshift-authentication"),
			Location{Cluster: routing.ClusterManagement, Identity: id("", "namespaces", "", "hcp"), Absorbed: true}},
		{"user-workload output: guest", hosted, outputs, id("rbac.authorization.k8s.io", "clusterroles", "", "reader"),
			Location{Cluster: routing.ClusterGuest, Identity: id("rbac.authorization.k8s.io", "clusterroles", "", "reader")}},
		{"same name, other namespace: guest", hosted, outputs, id("", "configmaps", "other", "audit"), Location{Cluster: routing.ClusterGuest, Identity: id("", "configmaps", "other", "audit")}},
		{"no outputs: guest", hosted, nil, audit, Location{Cluster: routing.ClusterGuest, Identity: audit}},
		{"rule drops the class: guest", dropped, outputs, audit, Location{Cluster: routing.ClusterGuest, Identity: audit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m namespaces.Mapper = names
			if tt.cfg.Topology.Type != config.Hosted {
				m = namespaces.Identity{}
			}
			got, err := Place(tt.cfg, m, tt.outputs, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Place(%s) (-want +got):\n%s", tt.id, diff)
			}
		})
	}
}

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
	cfg := mustConfig(t, hostedYAML)
	names, _ := HostedNames(cfg)
	g := &gatherer{opts: Options{Config: cfg}, names: names, inverse: translate.Inverse{Names: names}, seen: map[contract.Key]*contract.InputObject{}, fromManagement: map[string]bool{}, absorbed: map[string]bool{}}
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
  labels: {app: oauth}
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: other, uid: def}
data: {policy: x}
status: {kept: true}
`)
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
	obj, err := ProjectValue(Projections(&config.TopologyConfig{Gather: config.Gather{Projections: config.DefaultProjections}})[0], map[string]any{"type": "OIDC"})
	if err != nil {
		t.Fatal(err)
	}
	want := object(t, "apiVersion: config.openshift.io/v1\nkind: Authentication\nmetadata: {name: cluster}\nspec: {type: OIDC}\n")
	if diff := cmp.Diff(want.Object, obj.Object); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestGatherNeedsClusters(t *testing.T) {
	_, err := Gather(t.Context(), Options{Config: mustConfig(t, hostedYAML), Inputs: &contract.InputResources{}})
	if err == nil {
		t.Fatal("no error without client configurations")
	}
}
