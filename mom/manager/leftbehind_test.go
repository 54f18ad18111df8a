package manager

import (
	"context"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// TestLeftBehind: across runs, an object placed by an earlier run that a later one no longer
// writes, while it writes another of its family, is reported until a run writes or deletes
// it again.
func TestLeftBehind(t *testing.T) {
	secret := func(name string) contract.Identity {
		return contract.Identity{Version: "v1", Resource: "secrets", Namespace: "openshift-authentication", Name: name}
	}
	write := func(action contract.Action, names ...string) *plans.Plan {
		p := &plans.Plan{}
		for _, n := range names {
			p.Entries = append(p.Entries, plans.Entry{Action: action, Source: secret(n), Disposition: routing.Apply})
		}
		return p
	}
	join := func(a, b *plans.Plan) *plans.Plan {
		return &plans.Plan{Entries: append(a.Entries, b.Entries...)}
	}
	st := &operatorState{outputs: &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{{
		ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "secrets"}, Namespace: "openshift-authentication", Name: "idp-*-file-data",
	}}}}}
	runs := []struct {
		name string
		plan *plans.Plan
		want []string // objects reported left behind
	}{
		{"two providers", write(contract.ActionCreate, "idp-0-file-data", "idp-1-file-data"), nil},
		{"a run that writes none of the family", write(contract.ActionCreate, "other"), nil},
		{"the second provider removed", write(contract.ActionCreate, "idp-0-file-data"), []string{"idp-1-file-data"}},
		{"still removed", write(contract.ActionCreate, "idp-0-file-data"), []string{"idp-1-file-data"}},
		{"deleted", join(write(contract.ActionCreate, "idp-0-file-data"), write(contract.ActionDelete, "idp-1-file-data")), nil},
		{"once deleted, no longer placed", write(contract.ActionCreate, "idp-0-file-data"), nil},
	}
	for _, r := range runs {
		got := st.leftBehind(context.Background(), r.plan)
		if len(got) != len(r.want) {
			t.Fatalf("%s: left behind %q, want %q", r.name, got, r.want)
		}
		for i, w := range r.want {
			if !strings.HasPrefix(got[i], "secrets openshift-authentication/"+w+": ") {
				t.Errorf("%s: left behind %q, want %s", r.name, got[i], w)
			}
		}
	}
}
