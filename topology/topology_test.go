package topology_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/gather"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
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

const standaloneYAML = "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology: {type: Standalone}\n"

func mustTopology(t *testing.T, doc string) *topology.Topology {
	t.Helper()
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func exact(group, resource, ns, name string) contract.ExactResourceID {
	return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: group, Version: "v1", Resource: resource}, Namespace: ns, Name: name}
}

func id(group, resource, ns, name string) contract.Identity {
	return contract.Identity{Group: group, Version: "v1", Resource: resource, Namespace: ns, Name: name}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name         string
		doc          string
		wantName     string
		wantClusters []string
		wantBound    map[string]string
		wantStatus   topology.Status
		wantHCP      bool
	}{
		{"standalone", standaloneYAML, plans.TopologyStandalone, []string{routing.ClusterStandalone},
			map[string]string{routing.ClusterStandalone: ""},
			topology.Status{Cluster: routing.ClusterStandalone, Namespace: config.DefaultManagerNamespace, Create: true}, false},
		{"hosted", hostedYAML, plans.TopologyHosted, []string{routing.ClusterManagement, routing.ClusterGuest},
			map[string]string{routing.ClusterManagement: "hcp", routing.ClusterGuest: ""},
			topology.Status{Cluster: routing.ClusterManagement, Namespace: "hcp"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topo := mustTopology(t, tt.doc)
			if got := topo.Name(); got != tt.wantName {
				t.Errorf("Name() = %q, want %q", got, tt.wantName)
			}
			if diff := cmp.Diff(tt.wantClusters, topo.Clusters()); diff != "" {
				t.Errorf("Clusters() (-want +got):\n%s", diff)
			}
			if topo.Home() != tt.wantClusters[0] {
				t.Errorf("Home() = %q, want %q", topo.Home(), tt.wantClusters[0])
			}
			for c, want := range tt.wantBound {
				if got := topo.Bound(c); got != want {
					t.Errorf("Bound(%s) = %q, want %q", c, got, want)
				}
			}
			if diff := cmp.Diff(tt.wantStatus, topo.Status()); diff != "" {
				t.Errorf("Status() (-want +got):\n%s", diff)
			}
			if _, ok := topo.HostedControlPlane(); ok != tt.wantHCP {
				t.Errorf("HostedControlPlane() ok = %v, want %v", ok, tt.wantHCP)
			}
			e, err := topo.Engine("op", nil)
			if err != nil {
				t.Fatal(err)
			}
			records := slices.ContainsFunc(e.Stages, func(s translate.Stage) bool { _, ok := s.(translate.RecordSource); return ok })
			if e.Topology != tt.wantName || records != tt.wantHCP {
				t.Errorf("Engine: topology %q, records the source: %v", e.Topology, records)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		cfg  *config.TopologyConfig
	}{
		{"nil", nil},
		{"unknown type", &config.TopologyConfig{Topology: config.Topology{Type: "Elsewhere"}}},
		{"hosted without namespace", &config.TopologyConfig{Topology: config.Topology{Type: config.Hosted}}},
		{"alias collision", &config.TopologyConfig{Topology: config.Topology{Type: config.Hosted, Hosted: &config.HostedTopology{Namespace: "hcp"}},
			Namespaces: config.Namespaces{Aliases: []config.Alias{
				{Resource: "secrets", Namespace: "a", Name: "x", HostedName: "same"},
				{Resource: "secrets", Namespace: "b", Name: "y", HostedName: "same"},
			}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := topology.New(tt.cfg); err == nil {
				t.Error("New accepted it")
			}
		})
	}
}

func TestEngineNeedsOperatorWhenHosted(t *testing.T) {
	if _, err := mustTopology(t, hostedYAML).Engine("", nil); err == nil {
		t.Error("a hosted engine without an operator name was built")
	}
	if _, err := mustTopology(t, standaloneYAML).Engine("", nil); err != nil {
		t.Errorf("standalone engine: %v", err)
	}
}

// TestGuestIdentity: the hosted topology's engines make operands act on the guest, with the
// configured exceptions, and it writes their kubeconfigs; the standalone one does neither.
func TestGuestIdentity(t *testing.T) {
	for _, tc := range []struct {
		name, doc  string
		wantEngine bool
		wantWriter bool
	}{
		{"hosted", hostedYAML, true, true},
		{"standalone", standaloneYAML, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := mustTopology(t, tc.doc)
			e, err := topo.Engine("op", nil)
			if err != nil {
				t.Fatal(err)
			}
			if (e.GuestIdentity != nil) != tc.wantEngine {
				t.Errorf("engine guest identity %+v, want set: %v", e.GuestIdentity, tc.wantEngine)
			}
			rc := &rest.Config{Host: "https://127.0.0.1:1"}
			w, err := topo.GuestIdentities(map[string]*rest.Config{"management": rc, "guest": rc, "cluster": rc}, "op", nil, nil)
			if err != nil || (w != nil) != tc.wantWriter {
				t.Errorf("writer %v, %v; want one: %v", w, err, tc.wantWriter)
			}
		})
	}
	topo := mustTopology(t, strings.Replace(hostedYAML, "hosted: {namespace: hcp, hostedControlPlane: example}",
		"hosted: {namespace: hcp, hostedControlPlane: example, guestIdentity: {managementAPI: [{resource: deployments, name: kas}]}}", 1))
	e, err := topo.Engine("op", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.GuestIdentity == nil || len(e.GuestIdentity.ManagementAPI) != 1 || e.GuestIdentity.ManagementAPI[0].Name != "kas" {
		t.Errorf("engine guest identity %+v, want the configured managementAPI", e.GuestIdentity)
	}
}

func TestLocate(t *testing.T) {
	hosted := mustTopology(t, hostedYAML)
	dropped := mustTopology(t, hostedYAML+`routing:
  rules:
  - name: keep-cms-on-guest
    match: {class: Management, group: "", resource: configmaps}
    disposition: dropped
`)
	standalone := mustTopology(t, standaloneYAML)
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
	audit := id("", "configmaps", "openshift-authentication", "audit")
	auditTarget, err := hosted.Names().ToTarget(routing.ClusterManagement, audit)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		topo    *topology.Topology
		outputs *contract.OutputResources
		id      contract.Identity
		want    gather.Location
	}{
		{"standalone keeps everything", standalone, outputs, audit, gather.Location{Cluster: routing.ClusterStandalone, Identity: audit}},
		{"not written: guest", hosted, outputs, id("config.openshift.io", "infrastructures", "", "cluster"), gather.Location{Cluster: routing.ClusterGuest, Identity: id("config.openshift.io", "infrastructures", "", "cluster")}},
		{"management output: shadow", hosted, outputs, id("operator.openshift.io", "authentications", "", "cluster"),
			gather.Location{Cluster: routing.ClusterManagement, Identity: id("operator.openshift.io.shadow.topolayer.dev", "authentications", "hcp", "cluster")}},
		{"configuration output: spec where users edit it, status where the operator writes it", hosted, outputs, id("config.openshift.io", "ingresses", "", "cluster"),
			gather.Location{Cluster: routing.ClusterGuest, Identity: id("config.openshift.io", "ingresses", "", "cluster"), Status: &gather.Location{
				Cluster: routing.ClusterManagement, Identity: id("config.openshift.io.shadow.topolayer.dev", "ingresses", "hcp", "cluster")}}},
		{"namespaced output: encoded", hosted, outputs, audit, gather.Location{Cluster: routing.ClusterManagement, Identity: auditTarget}},
		{"aliased output", hosted, outputs, id("", "secrets", "openshift-authentication", "serving"),
			gather.Location{Cluster: routing.ClusterManagement, Identity: id("", "secrets", "hcp", "oauth-server-crt")}},
		{"namespace output: absorbed", hosted, outputs, id("", "namespaces", "", "openshift-authentication"),
			gather.Location{Cluster: routing.ClusterManagement, Identity: id("", "namespaces", "", "hcp"), Absorbed: true}},
		{"user-workload output: guest", hosted, outputs, id("rbac.authorization.k8s.io", "clusterroles", "", "reader"),
			gather.Location{Cluster: routing.ClusterGuest, Identity: id("rbac.authorization.k8s.io", "clusterroles", "", "reader")}},
		{"same name, other namespace: guest", hosted, outputs, id("", "configmaps", "other", "audit"), gather.Location{Cluster: routing.ClusterGuest, Identity: id("", "configmaps", "other", "audit")}},
		{"aliased input the operator does not write: the hosted control plane's own object", hosted, nil, id("", "secrets", "openshift-authentication", "serving"),
			gather.Location{Cluster: routing.ClusterManagement, Identity: id("", "secrets", "hcp", "oauth-server-crt")}},
		{"no outputs: guest", hosted, nil, audit, gather.Location{Cluster: routing.ClusterGuest, Identity: audit}},
		{"rule drops the class: guest", dropped, outputs, audit, gather.Location{Cluster: routing.ClusterGuest, Identity: audit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.topo.Locate(tt.outputs, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Locate(%s) (-want +got):\n%s", tt.id, diff)
			}
		})
	}
}

func TestProjections(t *testing.T) {
	if got := mustTopology(t, standaloneYAML).Projections(); len(got) != 0 {
		t.Errorf("standalone projections: %v", got)
	}
	got := mustTopology(t, hostedYAML).Projections()
	if len(got) != len(config.DefaultProjections()) {
		t.Fatalf("hosted projections: %d, want the %d defaults", len(got), len(config.DefaultProjections()))
	}
}

func TestAdoptionOf(t *testing.T) {
	for name, tc := range map[string]struct {
		config *config.Adoption
		flags  []string
		want   *apply.Adoption
	}{
		"off":                 {},
		"config":              {config: &config.Adoption{FieldManagers: []string{"authentication-operator"}}, want: &apply.Adoption{FieldManagers: []string{"authentication-operator"}}},
		"config, no managers": {config: &config.Adoption{}, want: &apply.Adoption{}},
		"flag":                {flags: []string{"kubectl"}, want: &apply.Adoption{FieldManagers: []string{"kubectl"}}},
		"both, deduplicated": {
			config: &config.Adoption{FieldManagers: []string{"authentication-operator"}},
			flags:  []string{"kubectl", "authentication-operator"},
			want:   &apply.Adoption{FieldManagers: []string{"authentication-operator", "kubectl"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := topology.AdoptionOf(tc.config, tc.flags)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AdoptionOf (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTransformsSwitchedOneByOne: transforms.disable turns named transforms of the profile
// off, every one of their copies (one per workload kind); the default UID comes only when
// the configuration says the management cluster assigns none.
func TestTransformsSwitchedOneByOne(t *testing.T) {
	const base = "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Hosted\n  hosted: {namespace: hcp, hostedControlPlane: example%s}\n%s"
	for _, tc := range []struct {
		name, hosted, transforms string
		absent, present          []string
	}{
		{"every opinion by default", "", "", []string{"hypershift/default-uid"}, []string{"hypershift/image-pull-policy", "hypershift/volume-default-modes", "hypershift/termination-message-policy", "hypershift/pull-secret"}},
		{"two turned off", "", "transforms: {disable: [hypershift/image-pull-policy, hypershift/pull-secret]}\n", []string{"hypershift/image-pull-policy", "hypershift/pull-secret"}, []string{"hypershift/volume-default-modes", "hypershift/termination-message-policy"}},
		{"a management cluster that assigns no UIDs", ", managementAssignsNoUIDs: true", "", nil, []string{"hypershift/default-uid"}},
		{"the default UID turned off", ", managementAssignsNoUIDs: true", "transforms: {disable: [hypershift/default-uid]}\n", []string{"hypershift/default-uid"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse(fmt.Appendf(nil, base, tc.hosted, tc.transforms))
			if err != nil {
				t.Fatal(err)
			}
			transforms, err := topology.Transforms(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tr := range transforms {
				names = append(names, tr.Name)
			}
			for _, n := range tc.absent {
				if slices.Contains(names, n) {
					t.Errorf("%s runs", n)
				}
			}
			for _, n := range tc.present {
				if !slices.Contains(names, n) {
					t.Errorf("%s does not run: %v", n, names)
				}
			}
		})
	}
}
