package manager

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/apply"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
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
