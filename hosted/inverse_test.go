package hosted_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/namespaces"
)

// TestInverseUndoesTranslation translates every object body of every corpus case without
// transforms, maps each translated object back, and compares it with the operator's original:
// identity, apiVersion, kind, references and annotations all return.
func TestInverseUndoesTranslation(t *testing.T) {
	cfg := loadConfig(t)
	cfg.Transforms.Profiles = []string{}
	inv := translate.Inverse{Names: namespaces.Hosted{Namespace: hcp}}
	checked := 0
	for _, c := range corpus.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out, plan := planCaseWith(t, c, cfg, nil)
			original := map[string][]byte{} // body by source file: the engine may add entries
			for _, m := range out.Mutations {
				original[m.Path] = m.Body
			}
			for _, e := range plan.Entries {
				if e.Mutation == nil || !e.Action.CarriesObject() || e.Action.IsStatus() || e.SourcePath == "" {
					// An entry the engine added (a service account of RuleGuestIdentity) has
					// no original to compare with.
					continue
				}
				back, src, warnings := mapBack(t, inv, e)
				if len(warnings) > 0 {
					t.Errorf("%s: %v", e.Source, warnings)
				}
				if src != e.Source {
					t.Errorf("identity %s, want %s", src, e.Source)
				}
				if diff := cmp.Diff(asMap(t, original[e.SourcePath]), asMap(t, []byte(back.MustString()))); diff != "" {
					t.Errorf("%s: mapped back differs from the original (-want +got):\n%s", e.Source, diff)
				}
				checked++
			}
		})
	}
	t.Logf("%d objects mapped back", checked)
}

// mapBack maps the object of a planned entry back with inv, to what the operator reads: the
// object, the identity it had and the warnings.
func mapBack(t *testing.T, inv translate.Inverse, e plans.Entry) (*yaml.RNode, contract.Identity, []string) {
	t.Helper()
	obj, err := yaml.Parse(string(contracttest.Bytes(t, e.Mutation)))
	if err != nil {
		t.Fatal(err)
	}
	back, src, warnings, err := inv.Object(e.Target.Cluster, e.Target.Identity, obj)
	if err != nil {
		t.Fatalf("%s: %v", e.Source, err)
	}
	return back, src, warnings
}

func asMap(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := sigsyaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestInverseRestoresWithheld translates every corpus case with the hypershift profile and
// maps back each object from which hypershift/withhold-management-ca-requests withheld
// labels or annotations: the operator reads its labels and annotations as it wrote them
// (references mapped back too), so it has no cause to write them again on every run.
func TestInverseRestoresWithheld(t *testing.T) {
	cfg := loadConfig(t)
	inv := translate.Inverse{Names: namespaces.Hosted{Namespace: hcp}}
	restored := 0
	for _, c := range corpus.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out, plan := planCaseWith(t, c, cfg, nil)
			original := map[string][]byte{}
			for _, m := range out.Mutations {
				original[m.Path] = m.Body
			}
			for _, e := range plan.Entries {
				if e.Object == nil || e.SourcePath == "" {
					continue
				}
				if _, ok := e.Object.GetAnnotations()[transform.AnnotationWithheld]; !ok {
					continue
				}
				back, _, _ := mapBack(t, inv, e)
				want := asMap(t, original[e.SourcePath])["metadata"].(map[string]any)
				got := asMap(t, []byte(back.MustString()))["metadata"].(map[string]any)
				for _, field := range []string{"labels", "annotations"} {
					if diff := cmp.Diff(want[field], got[field]); diff != "" {
						t.Errorf("%s: metadata.%s mapped back (-want +got):\n%s", e.Source, field, diff)
					}
				}
				restored++
			}
		})
	}
	if restored == 0 {
		t.Error("the profile withheld nothing in the corpus")
	}
	t.Logf("%d objects with withheld keys mapped back", restored)
}
