package manager

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

func TestOperatorsFromConfigAdopt(t *testing.T) {
	for name, tc := range map[string]struct {
		adopt *config.Adoption
	}{
		"adoption off": {},
		"adoption on":  {adopt: &config.Adoption{FieldManagers: []string{"authentication-operator"}}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := &config.TopologyConfig{Operators: []config.Operator{{Name: "op", Command: []string{"op"}, Adopt: tc.adopt}}}
			ops := OperatorsFromConfig(cfg, "/base")
			if len(ops) != 1 {
				t.Fatalf("%d operators", len(ops))
			}
			if diff := cmp.Diff(tc.adopt, ops[0].Adopt); diff != "" {
				t.Errorf("Adopt (-config +operator):\n%s", diff)
			}
		})
	}
}

func TestRememberAdoption(t *testing.T) {
	id := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "ns", Name: "x"}
	obj := &unstructured.Unstructured{}
	obj.SetResourceVersion("12")
	st := &operatorState{written: newOwnWrites()}
	(&Manager{}).remember(st, 1, []apply.EntryResult{{Cluster: "c", Identity: id, Status: apply.StatusApplied, Change: apply.ChangeAdopt, Object: obj, Intermediate: []string{"11"}}})
	for _, tc := range []struct {
		rv   string
		want bool
	}{{"11", true}, {"12", true}, {"10", false}} {
		if got := st.written.has(writtenKey("c", id), tc.rv); got != tc.want {
			t.Errorf("resourceVersion %s remembered = %v, want %v", tc.rv, got, tc.want)
		}
	}
}

// fakeLinked is a linked operator that records the limits it is given.
type fakeLinked struct {
	name   string
	limits []runner.Limits
}

func (f *fakeLinked) InMemory(l runner.Limits) *runner.InMemory {
	f.limits = append(f.limits, l)
	return &runner.InMemory{Name: f.name, Limits: l}
}

func TestLinkInProcess(t *testing.T) {
	limitsA := runner.Limits{Timeout: time.Minute, Memory: 1 << 30, OutputSize: 1 << 20}
	limitsB := runner.Limits{Timeout: time.Second}
	inProcess := &runner.InProcess{Name: "c"}
	for _, tc := range []struct {
		name    string
		linked  []string
		linkErr string          // a fragment of the error; "" for none
		want    map[string]bool // the operators that must run in memory
		limits  map[string]runner.Limits
		envOn   string // the operator configured with envFromInputs
	}{
		{name: "one of them", linked: []string{"a"}, want: map[string]bool{"a": true}, limits: map[string]runner.Limits{"a": limitsA}},
		{name: "two of them", linked: []string{"a", "b"}, want: map[string]bool{"a": true, "b": true}, limits: map[string]runner.Limits{"a": limitsA, "b": limitsB}},
		{name: "none", want: map[string]bool{}},
		{name: "one not run by Exec: no limits to carry", linked: []string{"c"}, want: map[string]bool{"c": true}, limits: map[string]runner.Limits{"c": {}}},
		{name: "a name not configured", linked: []string{"a", "ghost"}, linkErr: "ghost"},
		{name: "one whose environment comes from its inputs", linked: []string{"b"}, envOn: "b", linkErr: "operator b: envFromInputs: a linked operator runs in process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			execA := &runner.Exec{Name: "a", Command: []string{"a"}, Limits: limitsA}
			execB := &runner.Exec{Name: "b", Command: []string{"b"}, Limits: limitsB}
			ops := []Operator{{Name: "a", Runner: execA}, {Name: "b", Runner: execB}, {Name: "c", Runner: inProcess}}
			for i := range ops {
				if ops[i].Name == tc.envOn {
					ops[i].EnvFromInputs = []config.InputEnvVar{{Name: "HTTPS_PROXY"}}
				}
			}
			before := map[string]runner.Runner{"a": execA, "b": execB, "c": inProcess}
			fakes := map[string]*fakeLinked{}
			linked := map[string]Linked{}
			for _, name := range tc.linked {
				fakes[name] = &fakeLinked{name: name}
				linked[name] = fakes[name]
			}
			err := LinkInProcess(ops, linked)
			if tc.linkErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.linkErr) || strings.Contains(err.Error(), `"a"`) || strings.Contains(err.Error(), "[a") {
					t.Fatalf("LinkInProcess error = %v, want one naming %q only", err, tc.linkErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LinkInProcess: %v", err)
			}
			for _, op := range ops {
				mem, isMem := op.Runner.(*runner.InMemory)
				if !tc.want[op.Name] {
					if op.Runner != before[op.Name] {
						t.Errorf("%s: runner replaced by %T", op.Name, op.Runner)
					}
					continue
				}
				f := fakes[op.Name]
				if !isMem || mem.Name != op.Name {
					t.Fatalf("%s: runner %#v, want the linked operator's in-memory runner", op.Name, op.Runner)
				}
				if diff := cmp.Diff([]runner.Limits{tc.limits[op.Name]}, f.limits); diff != "" {
					t.Errorf("%s: limits given to the linked operator (-want +got):\n%s", op.Name, diff)
				}
				if mem.Limits != tc.limits[op.Name] {
					t.Errorf("%s: the in-memory runner's limits are %+v, want %+v", op.Name, mem.Limits, tc.limits[op.Name])
				}
			}
		})
	}
}
