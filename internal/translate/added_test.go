package translate_test

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// TestTransformAdds: a transform that adds (transform.Transform.Adds) gets an entry of its
// own beside each object it selects, rewritten by the stages after it and applied under
// translate.AddedFieldManager; the operator's own object of that identity wins; an object
// the transform cannot build, of a kind discovery does not know, or in another namespace,
// is a rejected entry that names the transform.
func TestTransformAdds(t *testing.T) {
	configMap := func(ns, name string) func(transform.Context, *yaml.RNode) (*yaml.RNode, error) {
		return func(_ transform.Context, obj *yaml.RNode) (*yaml.RNode, error) {
			return yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "-of-" + obj.GetName() + ", namespace: " + ns + "}\n")
		}
	}
	own := policyMutation(contract.ActionApply, "", "configmaps", "openshift-sample", "cm-of-sample",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-of-sample, namespace: openshift-sample}\ndata: {own: \"yes\"}\n")
	for _, tc := range []struct {
		name      string
		adds      func(transform.Context, *yaml.RNode) (*yaml.RNode, error)
		mutations []contract.Mutation
		// apply is whether the added entry applies; reason is part of its rejection.
		apply  bool
		reason string
		// none: no entry is added.
		none bool
	}{
		{name: "adds beside the object it selects", adds: configMap("openshift-sample", "cm"), apply: true},
		{name: "nothing to add", adds: func(transform.Context, *yaml.RNode) (*yaml.RNode, error) { return nil, nil }, none: true},
		{name: "the operator writes it itself", adds: configMap("openshift-sample", "cm"), mutations: []contract.Mutation{own}, none: true},
		{name: "another namespace", adds: configMap("kube-system", "cm"), reason: "outside the namespace of"},
		{name: "no name", adds: func(transform.Context, *yaml.RNode) (*yaml.RNode, error) {
			return yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: openshift-sample}\n")
		}, reason: "a ConfigMap without a name"},
		{name: "cannot build it", adds: func(transform.Context, *yaml.RNode) (*yaml.RNode, error) { return nil, errors.New("no selector") }, reason: "no selector"},
		{name: "unknown kind", adds: func(transform.Context, *yaml.RNode) (*yaml.RNode, error) {
			return yaml.Parse("apiVersion: example.com/v1\nkind: Unknown\nmetadata: {name: u, namespace: openshift-sample}\n")
		}, reason: "a kind discovery does not know"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adder := transform.Transform{Name: "test/adds", Match: routing.Match{Resource: "roles"}, Adds: tc.adds}
			label, err := transform.Patch{Name: "test/label", Match: routing.Match{Resource: "configmaps"}, StrategicMerge: "metadata: {labels: {patched: \"yes\"}}\n"}.Transform()
			if err != nil {
				t.Fatal(err)
			}
			e := translate.Standalone("sample-operator", nil)
			e.Stages = translate.StandaloneStages(adder, label)
			mutations := append([]contract.Mutation{role("openshift-sample", "sample", "- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n")}, tc.mutations...)
			plan := e.Plan(&contract.OutputDir{Mutations: mutations})
			var added []string
			for _, entry := range plan.Entries {
				if entry.Rule != adder.Name {
					continue
				}
				added = append(added, entry.Source.String())
				switch {
				case tc.apply && entry.Disposition != routing.Apply:
					t.Errorf("%s: %s (%s), want applied", entry.Source, entry.Disposition, entry.Reason)
				case tc.apply && (entry.Object.GetLabels()["patched"] != "yes" || entry.Source.Name != "cm-of-sample"):
					t.Errorf("%s: %v, want the stages after it to run on it", entry.Source, entry.Object.Object)
				case tc.apply && (entry.Mutation == nil || entry.Mutation.Metadata.FieldManager != translate.AddedFieldManager):
					t.Errorf("%s: mutation %+v, want field manager %s", entry.Source, entry.Mutation, translate.AddedFieldManager)
				case !tc.apply && (entry.Disposition != routing.Rejected || !strings.Contains(entry.Reason, tc.reason)):
					t.Errorf("%s: %s (%s), want rejected with %q", entry.Source, entry.Disposition, entry.Reason, tc.reason)
				}
			}
			if len(added) != 1 && !tc.none || len(added) != 0 && tc.none {
				t.Errorf("added %v, want one: %v", added, !tc.none)
			}
			for _, entry := range plan.Entries {
				if entry.Source.Name == "cm-of-sample" && tc.mutations != nil && (entry.Rule == adder.Name || entry.Object.Object["data"] == nil) {
					t.Errorf("the operator's own %s lost to the added one", entry.Source)
				}
			}
		})
	}
}
