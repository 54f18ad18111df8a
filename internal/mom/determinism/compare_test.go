package determinism

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/topolayer/topolayer/contract"
)

// configMap is a Management Apply of ConfigMap ns/name by controller, holding value.
func configMap(controller, name, value string) contract.Mutation {
	m := contract.Mutation{
		Class: contract.ClassManagement,
		Metadata: contract.Metadata{
			Action: contract.ActionApply, ControllerInstanceName: controller, FieldManager: controller,
			Namespace: "ns", Name: name, ResourceType: contract.ResourceType{Resource: "configmaps", Version: "v1"},
		},
		Body: fmt.Appendf(nil, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: ns\ndata:\n  v: %q\n", name, value),
	}
	return m
}

// event is an Event created about the ConfigMap ns/cm, with a name of its own.
func event(name, reason, message string) contract.Mutation {
	return contract.Mutation{
		Class: contract.ClassManagement,
		Metadata: contract.Metadata{
			Action: contract.ActionCreate, Namespace: "ns", Name: name,
			ResourceType: contract.ResourceType{Resource: "events", Version: "v1"},
		},
		Body: fmt.Appendf(nil, "apiVersion: v1\nkind: Event\nmetadata:\n  name: %s\n  namespace: ns\n"+
			"involvedObject:\n  kind: ConfigMap\n  namespace: ns\n  name: cm\nreason: %s\nmessage: %s\n", name, reason, message),
	}
}

// results is a controller-results.yaml: name, status, then name, status...
func results(nameStatus ...string) *contract.ControllerResults {
	r := &contract.ControllerResults{}
	for i := 0; i+1 < len(nameStatus); i += 2 {
		r.ControllerResults = append(r.ControllerResults, contract.ControllerResult{ControllerName: nameStatus[i], Status: contract.ControllerStatus(nameStatus[i+1])})
	}
	return r
}

// fakeRun is one synthetic run: its mutations, controller-results.yaml and exit code.
type fakeRun struct {
	ms   []contract.Mutation
	res  *contract.ControllerResults
	exit int
}

// writeRuns writes each run as an output directory and reads it back as Check does.
func writeRuns(t *testing.T, runs []fakeRun) []Run {
	t.Helper()
	var out []Run
	for i, r := range runs {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("run-%d", i+1))
		if err := contract.WriteOutputDir(dir, &contract.OutputDir{Mutations: r.ms, ControllerResults: r.res}, contract.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		read, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Run{Output: read, ExitCode: r.exit})
	}
	return out
}

func TestCompare(t *testing.T) {
	a, a2 := configMap("syncer", "cm", "a"), configMap("syncer", "cm", "b")
	obs := configMap("observer", "config", "x")
	cm := "configmaps ns/cm"
	for name, tc := range map[string]struct {
		runs    []fakeRun
		want    []Controller
		checked []string // nil: not checked
	}{
		"identical runs": {
			runs:    []fakeRun{{ms: []contract.Mutation{a, obs}, res: results("syncer", "Succeeded")}, {ms: []contract.Mutation{obs, a}, res: results("syncer", "Succeeded")}},
			checked: []string{"observer", "syncer"},
		},
		"an object written in some runs only": {
			runs: []fakeRun{{ms: []contract.Mutation{a, obs}}, {ms: []contract.Mutation{obs}}, {ms: []contract.Mutation{a, obs}}},
			want: []Controller{{Name: "syncer", RunsDiffering: 1, Objects: []Object{{
				Class: contract.ClassManagement, Action: contract.ActionApply, Object: cm,
				WrittenIn: []int{1, 3}, NotWrittenIn: []int{2}, Variants: 1, Difference: "written in 2 of 3 runs",
			}}}},
		},
		"bodies that differ in some runs": {
			runs: []fakeRun{{ms: []contract.Mutation{a}}, {ms: []contract.Mutation{a2}}, {ms: []contract.Mutation{a}}},
			want: []Controller{{Name: "syncer", RunsDiffering: 1, Objects: []Object{{
				Class: contract.ClassManagement, Action: contract.ActionApply, Object: cm,
				WrittenIn: []int{1, 2, 3}, Variants: 2, Difference: "2 different bodies in 3 runs",
			}}}},
		},
		"a different body in every run (random content)": {
			runs: []fakeRun{{ms: []contract.Mutation{a}}, {ms: []contract.Mutation{a2}}},
			want: []Controller{{Name: "syncer", RunsDiffering: 1, Objects: []Object{{
				Class: contract.ClassManagement, Action: contract.ActionApply, Object: cm,
				WrittenIn: []int{1, 2}, Variants: 2, Difference: "a different body in each of 2 runs",
			}}}},
		},
		"two controllers writing the same object in turn": {
			runs: []fakeRun{{ms: []contract.Mutation{a}}, {ms: []contract.Mutation{configMap("other", "cm", "a")}}},
			want: []Controller{
				{Name: "other", RunsDiffering: 1, Objects: []Object{{Class: contract.ClassManagement, Action: contract.ActionApply, Object: cm,
					WrittenIn: []int{2}, NotWrittenIn: []int{1}, Variants: 1, Difference: "written in 1 of 2 runs"}}},
				{Name: "syncer", RunsDiffering: 1, Objects: []Object{{Class: contract.ClassManagement, Action: contract.ActionApply, Object: cm,
					WrittenIn: []int{1}, NotWrittenIn: []int{2}, Variants: 1, Difference: "written in 1 of 2 runs"}}},
			},
		},
		"events with random names are the same events": {
			runs: []fakeRun{
				{ms: []contract.Mutation{event("cm.18599d2230299800.8e136ebd", "Synced", "copied")}},
				{ms: []contract.Mutation{event("cm.18599d2230299800.0f1e2d3c", "Synced", "copied")}},
			},
		},
		"an event in some runs only": {
			runs: []fakeRun{
				{ms: []contract.Mutation{event("cm.1.a", "Synced", "copied")}},
				{ms: []contract.Mutation{event("cm.1.b", "Synced", "copied again")}},
			},
			want: []Controller{{Name: EventsController, RunsDiffering: 1, Objects: []Object{
				{Class: contract.ClassManagement, Action: contract.ActionCreate, Object: "event Synced ConfigMap ns/cm",
					WrittenIn: []int{1}, NotWrittenIn: []int{2}, Variants: 1, Difference: "written in 1 of 2 runs"},
				{Class: contract.ClassManagement, Action: contract.ActionCreate, Object: "event Synced ConfigMap ns/cm",
					WrittenIn: []int{2}, NotWrittenIn: []int{1}, Variants: 1, Difference: "written in 1 of 2 runs"},
			}}},
		},
		"controller results that differ": {
			runs: []fakeRun{{res: results("syncer", "Succeeded")}, {res: results("syncer", "Failed")}, {res: results("syncer", "Succeeded")}},
			want: []Controller{{Name: "syncer", RunsDiffering: 1, Objects: []Object{{
				Object: controllerResultsObject, WrittenIn: []int{1, 2, 3}, Variants: 2,
				Difference: `"Succeeded" in 2, "Failed" in 1 of 3 runs`,
			}}}},
		},
		"a controller missing from the results of a run": {
			runs: []fakeRun{{res: results("syncer", "Succeeded")}, {res: results()}},
			want: []Controller{{Name: "syncer", RunsDiffering: 1, Objects: []Object{{
				Object: controllerResultsObject, WrittenIn: []int{1}, NotWrittenIn: []int{2}, Variants: 1,
				Difference: `"Succeeded" in 1, (absent) in 1 of 2 runs`,
			}}}},
		},
		"exit codes that differ": {
			runs: []fakeRun{{exit: 0}, {exit: 1}, {exit: 1}},
			want: []Controller{{Name: ExitCodeController, RunsDiffering: 1, Objects: []Object{{
				Object: "exit code", WrittenIn: []int{1, 2, 3}, Variants: 2, Difference: `"0" in 1, "1" in 2 of 3 runs`,
			}}}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := Compare(writeRuns(t, tc.runs))
			if diff := cmp.Diff(tc.want, got.Nondeterministic, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("nondeterministic controllers (-want +got):\n%s", diff)
			}
			if got.Deterministic() != (len(tc.want) == 0) {
				t.Errorf("Deterministic() = %v with %d nondeterministic controllers", got.Deterministic(), len(got.Nondeterministic))
			}
			if tc.checked != nil && !cmp.Equal(tc.checked, got.Checked) {
				t.Errorf("Checked = %q, want %q", got.Checked, tc.checked)
			}
			if got.Runs != len(tc.runs) {
				t.Errorf("Runs = %d, want %d", got.Runs, len(tc.runs))
			}
		})
	}
}
