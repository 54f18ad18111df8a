package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/routing"
)

const header = "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\n"
const hostedTopology = "topology:\n  type: Hosted\n  hosted: {namespace: clusters-example, hostedControlPlane: example}\n"

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, in     string
		wantType     config.TopologyType
		wantProfiles []string
	}{
		{"standalone", header + "topology: {type: Standalone}\n", config.Standalone, nil},
		{"empty topology is standalone", header + "topology: {}\n", config.Standalone, nil},
		{"hosted gets the hypershift profile", header + hostedTopology, config.Hosted, []string{hosted.ProfileHyperShift}},
		{"profiles can be turned off", header + hostedTopology + "transforms: {profiles: []}\n", config.Hosted, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Topology.Type != tc.wantType || len(cfg.Transforms.Profiles) != len(tc.wantProfiles) || cfg.Routing.ClusterRBAC != routing.ConvertClusterRBAC {
				t.Fatalf("got %+v", cfg)
			}
		})
	}
}

// TestBrokenConfigs: every broken configuration is refused with the path of its field.
func TestBrokenConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"wrong apiVersion", "apiVersion: v1\nkind: TopologyConfig\ntopology: {}\n", []string{"apiVersion", "must be topolayer.dev/v1alpha1"}},
		{"wrong kind", "apiVersion: topolayer.dev/v1alpha1\nkind: Config\ntopology: {}\n", []string{"kind", "must be TopologyConfig"}},
		{"unknown topology type", header + "topology: {type: Federated}\n", []string{"topology.type", "Unsupported value"}},
		{"hosted without its namespace", header + "topology: {type: Hosted}\n", []string{"topology.hosted", "Required"}},
		{"hosted namespace not a label", header + "topology:\n  type: Hosted\n  hosted: {namespace: Clusters_Example, hostedControlPlane: example}\n", []string{"topology.hosted.namespace", "RFC 1123"}},
		{"hosted control plane missing", header + "topology:\n  type: Hosted\n  hosted: {namespace: clusters-example}\n", []string{"topology.hosted.hostedControlPlane", "Required"}},
		{"hosted fields on standalone", header + "topology:\n  type: Standalone\n  hosted: {namespace: x, hostedControlPlane: y}\n", []string{"topology.hosted", "Forbidden"}},
		{"misspelled field", header + "topology: {type: Hosted, hostd: {}}\n", []string{"unknown field", "hostd"}},
		{"two unknown fields, one in a list", header + "topology: {type: Standalone, hostd: {}}\noperators:\n- {name: a, command: [x], limitz: {}}\n", []string{"topology.hostd: Forbidden: unknown field (known here: hosted, type)", "operators[0].limitz: Forbidden: unknown field (known here: ", "limits"}},
		{"a kind where a resource goes", header + hostedTopology + "routing:\n  rules:\n  - name: r\n    match: {group: \"\", resource: Secret}\n    cluster: guest\n", []string{"routing.rules[0].match.resource", `did you mean "secrets"`}},
		{"rule without a name", header + hostedTopology + "routing:\n  rules:\n  - match: {resource: secrets}\n    cluster: guest\n", []string{"routing.rules[0].name", "Required value"}},
		{"rule to an unknown cluster", header + hostedTopology + "routing:\n  rules:\n  - name: r\n    match: {resource: secrets}\n    cluster: elsewhere\n", []string{"routing.rules[0].cluster", `Unsupported value: "elsewhere": supported values: "management", "guest"`}},
		{"guest cluster in standalone", header + "topology: {type: Standalone}\nrouting:\n  rules:\n  - name: r\n    match: {resource: secrets}\n    cluster: guest\n", []string{"routing.rules[0].cluster", `supported values: "cluster"`}},
		{"unknown disposition", header + hostedTopology + "routing:\n  rules:\n  - name: r\n    match: {resource: secrets}\n    disposition: ignore\n", []string{"rules[0].disposition", `"ignore"`}},
		{"duplicate rule names", header + hostedTopology + "routing:\n  rules:\n  - {name: r, match: {resource: secrets}, cluster: guest}\n  - {name: r, match: {resource: configmaps}, cluster: guest}\n", []string{"rules[1].name", "also the name of rules[0]"}},
		{"wildcard in the middle", header + hostedTopology + "routing:\n  rules:\n  - {name: r, match: {namespace: \"open*shift\"}, cluster: guest}\n", []string{"rules[0].match.namespace", "only at the end"}},
		{"unknown class", header + hostedTopology + "routing:\n  rules:\n  - {name: r, match: {class: Control}, cluster: guest}\n", []string{"rules[0].match.class", `"Control"`}},
		{"unknown RBAC policy", header + hostedTopology + "routing: {clusterRBAC: Allow}\n", []string{"routing.clusterRBAC", "Unsupported value"}},
		{"unknown profile", header + hostedTopology + "transforms: {profiles: [openshift]}\n", []string{"transforms.profiles[0]", "Unsupported value"}},
		{"unknown transform to disable", header + hostedTopology + "transforms: {disable: [hypershift/image-pull-policy, hypershift/imagepullpolicy]}\n", []string{"transforms.disable[1]", `Unsupported value: "hypershift/imagepullpolicy"`, `"hypershift/image-pull-policy"`}},
		{"transform to disable of no configured profile", header + hostedTopology + "transforms: {profiles: [], disable: [hypershift/pull-secret]}\n", []string{"transforms.disable[0]", `Unsupported value: "hypershift/pull-secret"`}},
		{"patch with both kinds", header + hostedTopology + "transforms:\n  patches:\n  - name: p\n    strategicMerge: 'spec: {}'\n    json6902: '[]'\n", []string{"transforms.patches[0]", "not both"}},
		{"patch that does not parse", header + hostedTopology + "transforms:\n  patches:\n  - name: p\n    json6902: '[{\"op\": \"frobnicate\"}]'\n", []string{"transforms.patches[0]", "json6902"}},
		{"patch without a name", header + hostedTopology + "transforms:\n  patches:\n  - strategicMerge: 'spec: {}'\n", []string{"transforms.patches[0].name", "Required"}},
		{"alias without a hosted name", header + hostedTopology + "namespaces:\n  aliases:\n  - {group: \"\", resource: secrets, namespace: a, name: b}\n", []string{"namespaces.aliases[0].hostedName", "Required"}},
		{"alias shaped like an encoded name", header + hostedTopology + "namespaces:\n  aliases:\n  - {group: \"\", resource: secrets, namespace: a, name: b, hostedName: a--b}\n", []string{"namespaces.aliases[0].hostedName", `"--"`}},
		{"alias on standalone", header + "topology: {type: Standalone}\nnamespaces:\n  aliases:\n  - {group: \"\", resource: secrets, namespace: a, name: b, hostedName: c}\n", []string{"namespaces.aliases", "only for type Hosted"}},
		{"not YAML", "topology: [", []string{"decode"}},
		{"operator without a command", header + "operators:\n- name: sample\n", []string{"operators[0].command", "Required"}},
		{"operator name not a label", header + "operators:\n- {name: Sample_Op, command: [bin/sample]}\n", []string{"operators[0].name", "RFC 1123"}},
		{"two operators with one name", header + "operators:\n- {name: a, command: [x]}\n- {name: a, command: [y]}\n", []string{"operators[1].name", "Duplicate"}},
		{"operator given a kubeconfig", header + "operators:\n- {name: a, command: [x], env: {KUBECONFIG: /root/.kube/config}}\n", []string{"operators[0].env[KUBECONFIG]", "offline"}},
		{"service account without a namespace", header + "operators:\n- {name: a, command: [x], serviceAccount: sample}\n", []string{"operators[0].serviceAccount", "NAMESPACE/NAME"}},
		{"negative timeout", header + "operators:\n- {name: a, command: [x], limits: {timeout: -1s}}\n", []string{"operators[0].limits.timeout", "positive"}},
		{"resync not positive", header + "operators:\n- {name: a, command: [x], resync: 0s}\n", []string{"operators[0].resync", "positive"}},
		{"negative resync", header + "operators:\n- {name: a, command: [x], resync: -5m}\n", []string{"operators[0].resync", "positive"}},
		{"zero output size", header + "operators:\n- {name: a, command: [x], limits: {outputSize: \"0\"}}\n", []string{"operators[0].limits.outputSize", "positive"}},
		{"memory not a quantity", header + "operators:\n- {name: a, command: [x], limits: {memory: lots}}\n", []string{"decode", "quantities must match"}},
		{"empty adopted field manager", header + "operators:\n- {name: a, command: [x], adopt: {fieldManagers: [authentication-operator, \"\"]}}\n", []string{"operators[0].adopt.fieldManagers[1]", "Required"}},
		{"unknown controller failure policy", header + "operators:\n- {name: a, command: [x], onControllerFailure: Ignore}\n", []string{"operators[0].onControllerFailure", "Unsupported"}},
		{"supplement without a version", header + "operators:\n- {name: a, command: [x], supplements: {inputs: {applyConfigurationResources: {exactResources: [{group: config.openshift.io, resource: authentications, name: cluster}]}}}}\n", []string{"operators[0].supplements.inputs", "version"}},
		{"controller list in one string", header + "operators:\n- {name: a, command: [x], controllers: [\"a,b\"]}\n", []string{"operators[0].controllers[0]", "no comma"}},
		{"negative debounce", header + "scheduler: {debounce: -2s}\n", []string{"scheduler.debounce", "negative"}},
		{"debounce not a duration", header + "scheduler: {debounce: soon}\n", []string{"decode", "soon"}},
		{"budget below -1", header + "scheduler: {mutationsPerMinute: -5}\n", []string{"scheduler.mutationsPerMinute", "-1 for no budget"}},
		{"relative work dir", header + "manager: {workDir: tmp/runs}\n", []string{"manager.workDir", "absolute"}},
		{"guest identity server not https", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    guestIdentity: {server: \"http://kube-apiserver:6443\"}\n", []string{"topology.hosted.guestIdentity.server", "https://"}},
		{"guest identity token below the API's minimum", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    guestIdentity: {tokenExpiration: 5m}\n", []string{"topology.hosted.guestIdentity.tokenExpiration", "at least 10m"}},
		{"guest identity CA key not a key", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    guestIdentity: {caKey: \"ca/crt\"}\n", []string{"topology.hosted.guestIdentity.caKey", "Invalid value"}},
		{"management API for a kind without pods", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    guestIdentity: {managementAPI: [{resource: configmaps}]}\n", []string{"topology.hosted.guestIdentity.managementAPI[0].resource", "Unsupported value"}},
		{"konnectivity without its image", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    hypershift: {konnectivity: [{workload: oauth-openshift, mode: Dual}]}\n", []string{"topology.hosted.hypershift.images[controlplane-operator]", "Required"}},
		{"unknown konnectivity mode", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    hypershift: {images: {controlplane-operator: q/cpo:1}, konnectivity: [{workload: a, mode: socks}]}\n", []string{"topology.hosted.hypershift.konnectivity[0].mode", `Unsupported value: "socks"`}},
		{"availability prober without its image", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    hypershift: {availabilityProber: [oauth-openshift]}\n", []string{"topology.hosted.hypershift.images[availability-prober]", "Required"}},
		{"a workload spread twice", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    hypershift: {multiZoneSpread: [oauth-openshift, oauth-openshift]}\n", []string{"topology.hosted.hypershift.multiZoneSpread[1]", "Duplicate"}},
		{"image without a pull spec", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    hypershift: {images: {oauth-server: \"\"}, requestServing: [\"\"]}\n", []string{"topology.hosted.hypershift.images[oauth-server]", "topology.hosted.hypershift.requestServing[0]"}},
		{"projection on standalone", header + "topology: {type: Standalone}\ngather:\n  projections:\n  - {group: config.openshift.io, version: v1, resource: oauths, kind: OAuth, name: cluster, field: spec, from: spec.configuration.oauth}\n", []string{"gather.projections", "only for type Hosted"}},
		{"projection into metadata", header + hostedTopology + "gather:\n  projections:\n  - {group: config.openshift.io, version: v1, resource: oauths, kind: OAuth, name: cluster, field: metadata.labels, from: spec.configuration.oauth}\n", []string{"gather.projections[0].field", "never metadata"}},
		{"two documents", header + "topology: {type: Standalone}\n---\n" + header + hostedTopology, []string{"document 2", "has 2 (documents [1 2])"}},
		{"two documents after an empty one", "---\n# a comment\n---\n" + header + "topology: {}\n---\n" + header + "topology: {}\n", []string{"document 3", "has 2"}},
		{"projection from a broken path", header + hostedTopology + "gather:\n  projections:\n  - {group: config.openshift.io, version: v1, resource: oauths, kind: OAuth, name: cluster, field: spec, from: spec..oauth}\n", []string{"gather.projections[0].from", "dotted field path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "broken.yaml")
			if err := os.WriteFile(file, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(file)
			wantRefused(t, err, tc.in, append([]string{file}, tc.want...)...)
		})
	}
}

// TestOneDocumentWithSeparators: separators around one document are not several documents.
func TestOneDocumentWithSeparators(t *testing.T) {
	if _, err := config.Parse([]byte("---\n" + header + "topology: {}\n---\n")); err != nil {
		t.Fatal(err)
	}
}

// TestShadowedRules: a configured rule that ties with a built-in one and loses is named
// with its path; one that wins, or does not overlap, is not.
func TestShadowedRules(t *testing.T) {
	cfg, err := config.Parse([]byte(header + hostedTopology + `routing:
  rules:
  - {name: my-management, match: {class: Management}, cluster: guest}
  - {name: my-secrets, match: {resource: secrets}, cluster: guest, priority: 1}
  - {name: my-workload-secrets, match: {class: UserWorkload, resource: secrets}, cluster: management}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.ShadowedRules()
	if len(got) != 1 || !strings.Contains(got[0], "routing.rules[0] (my-management): ties with the built-in rule hosted/management") || !strings.Contains(got[0], "give it priority 1") {
		t.Errorf("ShadowedRules = %q", got)
	}
}

// TestGuestIdentityDefaults: a hosted configuration gets HyperShift's guest API address and
// CA and a one-hour token unless it says otherwise.
func TestGuestIdentityDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     config.GuestIdentity
	}{
		{"defaults", header + hostedTopology, config.GuestIdentity{Server: "https://kube-apiserver:6443", CAConfigMap: "root-ca", CAKey: "ca.crt", TokenExpiration: &metav1.Duration{Duration: time.Hour}}},
		{"configured", header + "topology:\n  type: Hosted\n  hosted:\n    namespace: clusters-example\n    hostedControlPlane: example\n    guestIdentity: {server: \"https://10.0.0.1\", caConfigMap: guest-ca, caKey: bundle.pem, tokenExpiration: 15m, managementAPI: [{resource: deployments, name: kas}]}\n",
			config.GuestIdentity{Server: "https://10.0.0.1", CAConfigMap: "guest-ca", CAKey: "bundle.pem", TokenExpiration: &metav1.Duration{Duration: 15 * time.Minute}, ManagementAPI: []routing.Match{{Resource: "deployments", Name: "kas"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, cfg.Topology.Hosted.GuestIdentity); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestShippedExamplesAreValid(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		if _, err := config.Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
