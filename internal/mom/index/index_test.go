package index_test

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/index"
)

func inputs(t *testing.T, yaml string) *contract.InputResources {
	t.Helper()
	in, err := contract.ParseInputResources([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

const sampleInputs = `applyConfigurationResources:
  exactResources:
  - {group: "", version: v1, resource: configmaps, namespace: openshift-config, name: sample-settings}
  - {group: samples.operator.topolayer.dev, version: v1alpha1, resource: samples, name: cluster}
`

const auditInputs = `applyConfigurationResources:
  exactResources:
  - {group: "", version: v1, resource: configmaps, namespace: openshift-config, name: sample-settings}
  - {group: "", version: v1, resource: configmaps, namespace: openshift-config, name: audit-policy}
  - {group: "", version: v1, resource: configmaps, namespace: openshift-config, name: audit-copy-*-policy}
  labelSelectedResources:
  - group: ""
    version: v1
    resource: secrets
    namespace: openshift-config
    labelSelector: {matchLabels: {audit.topolayer.dev/policy: "true"}}
  resourceReferences:
  - referringResource: {group: config.openshift.io, version: v1, resource: apiservers, name: cluster}
    type: ImplicitNamespacedReference
    implicitNamespacedReference: {group: "", version: v1, resource: secrets, namespace: openshift-config, nameJSONPath: "$.spec.servingCerts.namedCertificates[*].servingCertificate.name"}
`

func TestInterested(t *testing.T) {
	ix := index.New()
	if err := ix.Add("sample-operator", inputs(t, sampleInputs)); err != nil {
		t.Fatal(err)
	}
	if err := ix.Add("sample-audit-operator", inputs(t, auditInputs)); err != nil {
		t.Fatal(err)
	}
	cm := func(name string) contract.Identity {
		return contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-config", Name: name}
	}
	secret := func(name string) contract.Identity {
		return contract.Identity{Version: "v1", Resource: "secrets", Namespace: "openshift-config", Name: name}
	}
	for _, tc := range []struct {
		name   string
		id     contract.Identity
		labels map[string]string
		want   []string
	}{
		{"read by both", cm("sample-settings"), nil, []string{"sample-audit-operator", "sample-operator"}},
		{"read by one", cm("audit-policy"), nil, []string{"sample-audit-operator"}},
		{"read by none", cm("other"), nil, []string{}},
		{"same name, other namespace", contract.Identity{Resource: "configmaps", Namespace: "default", Name: "audit-policy"}, nil, []string{}},
		{"cluster-scoped CR", contract.Identity{Group: "samples.operator.topolayer.dev", Resource: "samples", Name: "cluster"}, nil, []string{"sample-operator"}},
		{"version does not matter", contract.Identity{Group: "samples.operator.topolayer.dev", Version: "v1", Resource: "samples", Name: "cluster"}, nil, []string{"sample-operator"}},
		{"selected by label", secret("a"), map[string]string{"audit.topolayer.dev/policy": "true"}, []string{"sample-audit-operator"}},
		{"matched by a name pattern", cm("audit-copy-2-policy"), nil, []string{"sample-audit-operator"}},
		{"a name the pattern does not match", cm("audit-copy-2-3-policy"), nil, []string{}},
		{"the pattern's name in another namespace", contract.Identity{Resource: "configmaps", Namespace: "default", Name: "audit-copy-2-policy"}, nil, []string{}},
		{"referring object", contract.Identity{Group: "config.openshift.io", Resource: "apiservers", Name: "cluster"}, nil, []string{"sample-audit-operator"}},
		{"referenced type, before resolution", secret("serving"), nil, []string{"sample-audit-operator"}},
		{"referenced type elsewhere", contract.Identity{Resource: "secrets", Namespace: "default", Name: "serving"}, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ix.Interested(tc.id, tc.labels); !slices.Equal(got, tc.want) {
				t.Errorf("Interested(%s) = %v, want %v", tc.id, got, tc.want)
			}
		})
	}

	// Once the references are resolved, only the named secret triggers.
	ix.Resolve("sample-audit-operator", []contract.Identity{secret("serving")})
	if got := ix.Interested(secret("serving"), nil); !slices.Equal(got, []string{"sample-audit-operator"}) {
		t.Errorf("resolved reference: %v", got)
	}
	if got := ix.Interested(secret("unrelated"), nil); len(got) != 0 {
		t.Errorf("unreferenced secret after resolution: %v", got)
	}
}

// TestBadSelector: Add refuses what the contract's parser would have refused, for
// declarations built in Go.
func TestBadSelector(t *testing.T) {
	in := &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{
		LabelSelectedResources: []contract.LabelSelectedResource{{
			ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "secrets"},
			LabelSelector:          metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Frobnicates"}}},
		}},
	}}
	err := index.New().Add("op", in)
	if err == nil || !strings.Contains(err.Error(), "operator op: labelSelectedResources[0]") {
		t.Fatalf("Add = %v, want an error naming the operator and the entry", err)
	}
}

func TestScopes(t *testing.T) {
	got := index.Scopes(map[string]*contract.InputResources{"a": inputs(t, sampleInputs), "b": inputs(t, auditInputs)})
	want := map[string][]string{
		"/v1, Resource=configmaps":                                  {"openshift-config"},
		"/v1, Resource=secrets":                                     {"openshift-config"},
		"config.openshift.io/v1, Resource=apiservers":               {""},
		"samples.operator.topolayer.dev/v1alpha1, Resource=samples": {""},
	}
	if len(got) != len(want) {
		t.Fatalf("scopes %+v", got)
	}
	for _, s := range got {
		if w, ok := want[s.Resource.String()]; !ok || !slices.Equal(s.Namespaces, w) {
			t.Errorf("%s: namespaces %v, want %v", s.Resource, s.Namespaces, w)
		}
	}
}

func TestConflicts(t *testing.T) {
	out := func(yaml string) *contract.OutputResources {
		o, err := contract.ParseOutputResources([]byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	a := out("managementResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: configmaps, namespace: openshift-sample, name: shared}\n  - {group: \"\", version: v1, resource: configmaps, namespace: openshift-sample, name: a}\n")
	b := out("userWorkloadResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: configmaps, namespace: openshift-sample, name: shared}\n")
	got := index.DeclaredConflicts(map[string]*contract.OutputResources{"a": a, "b": b})
	if len(got) != 1 || got[0].Identity.Name != "shared" || !slices.Equal(got[0].Operators, []string{"a", "b"}) {
		t.Errorf("declared conflicts = %v", got)
	}

	w := index.NewWrites()
	id := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "x", Name: "y"}
	if c := w.Record("a", []contract.Identity{id}); len(c) != 0 {
		t.Errorf("first writer: %v", c)
	}
	if c := w.Record("a", []contract.Identity{id}); len(c) != 0 {
		t.Errorf("same writer again: %v", c)
	}
	if c := w.Record("b", []contract.Identity{id}); len(c) != 1 || !slices.Equal(c[0].Operators, []string{"a", "b"}) {
		t.Errorf("second writer: %v", c)
	}
}
