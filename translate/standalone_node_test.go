package translate_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

// TestDropStandaloneNode: an installer Pod bound to a node and a guard PDB of a static-pod
// operator are dropped in the hosted topology by the named rule; a Pod without a node is not.
func TestDropStandaloneNode(t *testing.T) {
	installer := scopeMutation(t, "", "pods", "apiVersion: v1\nkind: Pod\nmetadata: {name: installer-7-master-0, namespace: openshift-kube-scheduler}\nspec: {nodeName: master-0, containers: [{name: i, image: i}]}\n")
	guard := scopeMutation(t, "policy", "poddisruptionbudgets", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: openshift-kube-scheduler-guard-pdb, namespace: openshift-kube-scheduler}\nspec: {minAvailable: 1, selector: {matchLabels: {app: guard}}}\n")
	pod := scopeMutation(t, "", "pods", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: openshift-kube-scheduler}\nspec: {containers: [{name: i, image: i}]}\n")
	plan := scopeEngine().Plan(&contract.OutputDir{Mutations: []contract.Mutation{installer, guard, pod}})
	for i, want := range []routing.Disposition{routing.Dropped, routing.Dropped, routing.Apply} {
		e := plan.Entries[i]
		if e.Disposition != want {
			t.Errorf("%s: %s by %s, want %s", e.Source, e.Disposition, e.Rule, want)
		}
		if want == routing.Dropped && (e.Rule != translate.RuleDropStandaloneNode || e.Reason == "") {
			t.Errorf("%s: rule %q reason %q", e.Source, e.Rule, e.Reason)
		}
	}
	standalone := translate.Standalone("op", nil).Plan(&contract.OutputDir{Mutations: []contract.Mutation{installer}})
	if d := standalone.Entries[0].Disposition; d != routing.Apply {
		t.Errorf("standalone: installer pod %s, want apply", d)
	}
}
