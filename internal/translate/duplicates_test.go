package translate_test

import (
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/check"
)

// TestDuplicateWrites: an object written twice in one output by one writer with two bodies
// is refused naming both files; a whole write by another controller is kept with a warning;
// server-side applies of several managers, one request under two classes and events are
// not duplicates.
func TestDuplicateWrites(t *testing.T) {
	cm := func(action contract.Action, controller, manager, path, data string) contract.Mutation {
		m := policyMutation(action, "", "configmaps", "openshift-sample", "settings",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: openshift-sample}\ndata: {k: "+data+"}\n")
		m.Metadata.ControllerInstanceName, m.Metadata.FieldManager, m.Path = controller, manager, path
		return m
	}
	event := func(path string) contract.Mutation {
		m := policyMutation(contract.ActionCreate, "", "events", "openshift-sample", "settings.1",
			"apiVersion: v1\nkind: Event\nmetadata: {name: settings.1, namespace: openshift-sample}\ninvolvedObject: {kind: ConfigMap, name: settings, namespace: openshift-sample}\nreason: Changed\n")
		m.Path = path
		return m
	}
	inClass := func(m contract.Mutation, c contract.Class) contract.Mutation { m.Class = c; return m }
	tests := []struct {
		name      string
		mutations []contract.Mutation
		rejected  string // the rejection's reason contains every part, "|"-separated
		warning   string
	}{
		{"one writer, two bodies", []contract.Mutation{cm(contract.ActionApply, "c", "m", "a.yaml", "1"), cm(contract.ActionApply, "c", "m", "b.yaml", "2")},
			"written twice in this output by controller c (field manager m)|a.yaml|b.yaml", ""},
		{"two Creates without a writer's name", []contract.Mutation{cm(contract.ActionCreate, "", "", "a.yaml", "1"), cm(contract.ActionCreate, "", "", "b.yaml", "2")},
			"the same unnamed writer|a.yaml|b.yaml", ""},
		{"two controllers' Updates: a sequence, the later replaces the earlier", []contract.Mutation{cm(contract.ActionUpdate, "observer-a", "", "a.yaml", "1"), cm(contract.ActionUpdate, "observer-b", "", "b.yaml", "2")},
			"", "controller observer-b replaces the whole object that controller observer-a wrote earlier in this output (a.yaml)"},
		{"two managers' server-side applies merge", []contract.Mutation{cm(contract.ActionApply, "c", "m1", "a.yaml", "1"), cm(contract.ActionApply, "c", "m2", "b.yaml", "2")}, "", ""},
		{"an update after a create", []contract.Mutation{cm(contract.ActionCreate, "c", "", "a.yaml", "1"), cm(contract.ActionUpdate, "c", "", "b.yaml", "2")}, "", ""},
		{"one request under two classes", []contract.Mutation{inClass(cm(contract.ActionApply, "c", "m", "a.yaml", "1"), contract.ClassManagement), inClass(cm(contract.ActionApply, "c", "m", "b.yaml", "1"), contract.ClassUserWorkload)}, "", ""},
		{"events", []contract.Mutation{event("a.yaml"), event("b.yaml")}, "", ""},
	}
	e := translate.Standalone("op", nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := e.Plan(&contract.OutputDir{Mutations: tc.mutations})
			var rejected, warnings []string
			for _, entry := range p.Entries {
				if entry.Rule == check.RuleDuplicateWrite {
					rejected = append(rejected, entry.Reason)
				}
				for _, w := range entry.Warnings {
					if strings.HasPrefix(w, check.RuleDuplicateWrite+":") {
						warnings = append(warnings, w)
					}
				}
			}
			switch {
			case tc.rejected == "" && len(rejected) > 0:
				t.Errorf("rejected: %q", rejected)
			case tc.rejected != "" && len(rejected) != 1:
				t.Errorf("rejected %q, want one rejection", rejected)
			case tc.rejected != "":
				for _, part := range strings.Split(tc.rejected, "|") {
					if !strings.Contains(rejected[0], part) {
						t.Errorf("reason %q does not say %q", rejected[0], part)
					}
				}
			}
			switch {
			case tc.warning == "" && len(warnings) > 0:
				t.Errorf("warnings: %q", warnings)
			case tc.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning)):
				t.Errorf("warnings %q, want one saying %q", warnings, tc.warning)
			}
		})
	}
}
