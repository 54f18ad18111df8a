package e2e

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/apply"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/e2e/cluster"
)

// TestApplySemanticNoOp applies an operator CR's status the way an operator's offline runs
// write it, every run stamping its conditions with --now: a run whose conditions only moved
// their times (and came in another order) sends no mutating request; a run with a real
// transition writes, and only the condition that transitioned gets the new time.
func TestApplySemanticNoOp(t *testing.T) {
	name := "apply-semantic-" + uniqueSuffix(t)
	shadowAuthentication(t, name)
	status := func(now, degraded string, reversed bool) contract.Mutation {
		a := fmt.Sprintf("  - {type: Available, status: \"True\", reason: AsExpected, message: ok, lastTransitionTime: %q}\n", now)
		d := fmt.Sprintf("  - {type: Degraded, status: %q, reason: AsExpected, message: ok, lastTransitionTime: %q}\n", degraded, now)
		conds := a + d
		if reversed {
			conds = d + a
		}
		m := mutation(contract.ClassManagement, contract.ActionApplyStatus, "operator.openshift.io/v1/authentications", "", name,
			authentication(name, "status:\n  readyReplicas: 1\n  conditions:\n"+conds))
		m.Options = []byte("fieldManager: e2e-status\nforce: true\n")
		return m
	}
	const t1, t2, t3 = "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z"
	run := func(m contract.Mutation) ([]apply.EntryResult, int64, *unstructured.Unstructured) {
		t.Helper()
		plan := hostedPlan(t, e2eOperator, nil, m)
		counter := &mutatingCounter{}
		res := mustApply(t, plan, hostedTargets(t, e2eOperator, counter))
		id := targetOf(t, plan)
		_, dyn := clients(t, hosted.Config(cluster.Management))
		obj, err := dyn.Resource(id.GroupVersionResource()).Namespace(id.Namespace).Get(t.Context(), id.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res, counter.n.Load(), obj
	}
	_, _, _ = run(status(t1, "False", false))

	res, n, obj := run(status(t2, "False", true))
	if n != 0 || res[0].Status != apply.StatusSkipped {
		t.Errorf("re-stamped run: %s, %d mutating requests, want skipped and 0", res[0].Status, n)
	}
	checkTimes(t, obj, map[string]string{"Available": t1, "Degraded": t1})

	res, n, obj = run(status(t3, "True", false))
	if n != 1 || res[0].Status != apply.StatusApplied {
		t.Errorf("transition: %s, %d mutating requests, want applied and 1", res[0].Status, n)
	}
	checkTimes(t, obj, map[string]string{"Available": t1, "Degraded": t3})
}

// checkTimes checks the lastTransitionTime of obj's conditions by type.
func checkTimes(t *testing.T, obj *unstructured.Unstructured, want map[string]string) {
	t.Helper()
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	got := map[string]string{}
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		got[typ], _ = m["lastTransitionTime"].(string)
	}
	for typ, w := range want {
		if got[typ] != w {
			t.Errorf("condition %s: lastTransitionTime %q, want %q (conditions %v)", typ, got[typ], w, conds)
		}
	}
}
