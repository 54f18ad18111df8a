package e2e

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
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

// TestApplyUpdateRepeatNoOp updates a Deployment the way an operator's runs write it, the
// same body every run (an update without the server's defaults): the first run writes, the
// next ones send nothing. The server-set defaults are owned by the update's field manager,
// so that comparing the body with the live object alone proves nothing; the target
// remembers that it sent this body to the object as it is now.
func TestApplyUpdateRepeatNoOp(t *testing.T) {
	ns := "openshift-e2e-repeat-" + uniqueSuffix(t)
	deployment := func(replicas int) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: server, namespace: %s, labels: {app: server}}
spec:
  replicas: %d
  selector: {matchLabels: {app: server}}
  template:
    metadata: {labels: {app: server}}
    spec:
      containers:
      - {name: server, image: "quay.io/example/server:v1"}
`, ns, replicas)
	}
	counter := &mutatingCounter{}
	targets := hostedTargets(t, e2eOperator, counter) // one manager's targets, kept across runs
	create := mutation(contract.ClassManagement, contract.ActionCreate, "apps/v1/deployments", ns, "server", deployment(1))
	mustApply(t, hostedPlan(t, e2eOperator, nil, create), targets)
	update := mutation(contract.ClassManagement, contract.ActionUpdate, "apps/v1/deployments", ns, "server", deployment(2))
	for run, want := range []struct {
		status   apply.Status
		requests int64
	}{{apply.StatusApplied, 1}, {apply.StatusSkipped, 0}, {apply.StatusSkipped, 0}} {
		before := counter.n.Load()
		var got apply.Status
		for _, r := range mustApply(t, hostedPlan(t, e2eOperator, nil, update), targets) {
			if r.Identity.Resource == "deployments" {
				got = r.Status
			}
		}
		if n := counter.n.Load() - before; got != want.status || n != want.requests {
			t.Errorf("run %d of the same update: %s, %d mutating requests; want %s, %d", run+1, got, n, want.status, want.requests)
		}
	}
}
