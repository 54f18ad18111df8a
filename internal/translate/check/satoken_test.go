package check

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// write is a Write of an entry and its action, for the checks that read no object.
type write struct {
	entry plans.Entry
	m     contract.Mutation
}

func (w *write) Entry() *plans.Entry                { return &w.entry }
func (w *write) Mutation() *contract.Mutation       { return &w.m }
func (w *write) Source() *unstructured.Unstructured { return nil }
func (w *write) Tree() *yaml.RNode                  { return nil }
func (w *write) Final() *yaml.RNode                 { return nil }
func (w *write) Edit() *yaml.RNode                  { return nil }
func (w *write) Reject(string, string)              { w.entry.Disposition = routing.Rejected }

func newWrite(action contract.Action, d routing.Disposition, group, resource, name string) *write {
	id := contract.Identity{Group: group, Version: "v1", Resource: resource, Namespace: "ns", Name: name}
	return &write{
		entry: plans.Entry{Disposition: d, Source: id, Target: plans.Target{Cluster: routing.ClusterManagement, Identity: id}},
		m:     contract.Mutation{Metadata: contract.Metadata{Action: action}},
	}
}

// TestWaitsForTokens: what Tokens reads waits for it; everything else may be finished
// as soon as it is rewritten.
func TestWaitsForTokens(t *testing.T) {
	deployment := newWrite(contract.ActionApply, routing.Apply, "apps", "deployments", "server")
	configMap := newWrite(contract.ActionApply, routing.Apply, "", "configmaps", "settings")
	patchedMap := newWrite(contract.ActionApply, routing.Apply, "", "configmaps", "patched")
	patch := newWrite(contract.ActionPatch, routing.Apply, "", "configmaps", "patched")
	account := newWrite(contract.ActionApply, routing.Apply, "", "serviceaccounts", "server")
	secret := newWrite(contract.ActionApply, routing.Apply, "", "secrets", "token")
	absorbed := newWrite(contract.ActionApply, routing.Absorbed, "apps", "deployments", "absorbed")
	deleted := newWrite(contract.ActionDelete, routing.Apply, "apps", "deployments", "gone")
	works := []Write{deployment, configMap, patchedMap, patch, account, secret, absorbed, deleted}
	waits := WaitsForTokens(works)
	for _, tt := range []struct {
		name string
		w    *write
		want bool
	}{
		{"a Deployment", deployment, false},
		{"a ConfigMap no patch targets", configMap, false},
		{"the object a patch is judged against", patchedMap, true},
		{"the patch", patch, true},
		{"a service account (Tokens reads whether the plan writes it)", account, true},
		{"a Secret (Tokens reads and renames its account)", secret, true},
		{"what is not applied", absorbed, true},
		{"a delete", deleted, true},
	} {
		if got := waits(tt.w); got != tt.want {
			t.Errorf("%s: WaitsForTokens = %v, want %v", tt.name, got, tt.want)
		}
	}
}
