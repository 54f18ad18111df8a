package translate_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// TestPlanChanges checks the changes the engine records in each entry, step by step, and
// that the entry's Object is its final body.
func TestPlanChanges(t *testing.T) {
	const hcp = "clusters-example"
	group := "apps"
	nodeSelector, err := transform.Patch{Name: "no-node-selector", Match: routing.Match{Group: &group, Resource: "deployments"},
		JSON6902: `[{"op": "remove", "path": "/spec/template/spec/nodeSelector"}, {"op": "add", "path": "/spec/template/spec/priorityClassName", "value": "p"}]`}.Transform()
	if err != nil {
		t.Fatal(err)
	}
	hosted := hostedEngine(hcp, nodeSelector)
	configMap := policyMutation(contract.ActionCreate, "", "configmaps", "demo", "settings",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: demo}\ndata: {k: v}\n")
	deployment := policyMutation(contract.ActionCreate, "apps", "deployments", "demo", "web",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: demo}\nspec:\n  template:\n    spec:\n"+
			"      nodeSelector: {a: b}\n      volumes: [{name: c, configMap: {name: settings}}]\n      containers: [{name: web, image: web}]\n")
	type change struct{ Path, By, Kind string }
	recorded := func(by string, paths ...string) []change {
		var out []change
		for _, p := range paths {
			out = append(out, change{p, by, map[string]string{
				plans.ByNamespaces: plans.ChangeRenamed, plans.ByReferenceTable: plans.ChangeReference,
				plans.ByAnnotate: plans.ChangeRecorded}[by]})
		}
		return out
	}
	identity := func(extra ...change) []change {
		return append(append(recorded(plans.ByNamespaces, "/metadata/namespace", "/metadata/name"), recorded(plans.ByAnnotate,
			"/metadata/annotations/topolayer.dev~1standalone-group", "/metadata/annotations/topolayer.dev~1standalone-name",
			"/metadata/annotations/topolayer.dev~1standalone-namespace", "/metadata/annotations/topolayer.dev~1standalone-resource",
			"/metadata/labels/topolayer.dev~1operator")...), extra...)
	}
	cases := map[string]struct {
		engine    translate.Engine
		mutations []contract.Mutation
		want      map[string][]change // by source name
	}{
		"standalone: nothing changes": {
			engine:    translate.Standalone("op", nil),
			mutations: []contract.Mutation{configMap, deployment},
			want:      map[string][]change{"settings": nil, "web": nil},
		},
		"hosted: identity, references, annotations, then the transform": {
			engine:    hosted,
			mutations: []contract.Mutation{configMap, deployment},
			want: map[string][]change{
				"settings": identity(),
				"web": append(recorded(plans.ByReferenceTable, "/spec/template/spec/volumes/0/configMap/name"), identity(
					change{"/spec/template/spec/nodeSelector/a", "no-node-selector", plans.ChangeTransformed},
					change{"/spec/template/spec/priorityClassName", "no-node-selector", plans.ChangeTransformed})...),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan := tc.engine.Plan(&contract.OutputDir{Mutations: tc.mutations})
			for _, e := range plan.Entries {
				if e.Disposition != routing.Apply {
					t.Fatalf("%s: %s by %s: %s", e.Source, e.Disposition, e.Rule, e.Reason)
				}
				var got []change
				for _, c := range e.Changes {
					got = append(got, change{c.Path, c.By, c.Kind})
				}
				if diff := cmp.Diff(tc.want[e.Source.Name], got); diff != "" {
					t.Errorf("%s: changes (-want +got):\n%s", e.Source, diff)
				}
				var body map[string]any
				if err := sigsyaml.Unmarshal(contracttest.Bytes(t, e.Mutation), &body); err != nil {
					t.Fatal(err)
				}
				js, err := json.Marshal(e.Object.Object)
				if err != nil {
					t.Fatal(err)
				}
				var object map[string]any
				if err := json.Unmarshal(js, &object); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(body, object); diff != "" {
					t.Errorf("%s: Object is not the body (-body +object):\n%s", e.Source, diff)
				}
			}
		})
	}
}
