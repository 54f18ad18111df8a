package translate_test

import (
	"slices"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/recovery"
	"github.com/topolayer/topolayer/routing"
)

func TestLeftBehind(t *testing.T) {
	secret := func(name string) contract.Identity {
		return contract.Identity{Version: "v1", Resource: "secrets", Namespace: "openshift-authentication", Name: name}
	}
	configMap := func(name string) contract.Identity {
		return contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-authentication", Name: name}
	}
	family := func(resource, name string) contract.ExactResourceID {
		return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: resource}, Namespace: "openshift-authentication", Name: name}
	}
	decls := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
		family("secrets", "v4-0-config-user-idp-*-file-data"),
		family("configmaps", "v4-0-config-user-idp-*-ca"),
		family("secrets", "v4-0-config-system-router-certs"),
	}}}
	placed := []contract.Identity{
		secret("v4-0-config-user-idp-0-file-data"), secret("v4-0-config-user-idp-1-file-data"),
		configMap("v4-0-config-user-idp-2-ca"), secret("v4-0-config-system-router-certs"),
	}
	tests := []struct {
		name    string
		entries []plans.Entry
		want    []contract.Identity
	}{
		{
			name: "every member written again",
			entries: []plans.Entry{
				{Action: contract.ActionCreate, Source: secret("v4-0-config-user-idp-0-file-data")},
				{Action: contract.ActionCreate, Source: secret("v4-0-config-user-idp-1-file-data")},
				{Action: contract.ActionCreate, Source: configMap("v4-0-config-user-idp-2-ca")},
			},
		},
		{
			name: "a member no longer written while its sibling is",
			entries: []plans.Entry{
				{Action: contract.ActionCreate, Source: secret("v4-0-config-user-idp-0-file-data")},
				{Action: contract.ActionCreate, Source: configMap("v4-0-config-user-idp-2-ca")},
			},
			want: []contract.Identity{secret("v4-0-config-user-idp-1-file-data")},
		},
		{
			name: "a member deleted",
			entries: []plans.Entry{
				{Action: contract.ActionCreate, Source: secret("v4-0-config-user-idp-0-file-data")},
				{Action: contract.ActionDelete, Source: secret("v4-0-config-user-idp-1-file-data")},
			},
		},
		{
			name: "a member whose Delete was recovered and placed",
			entries: []plans.Entry{
				{Action: contract.ActionCreate, Source: secret("v4-0-config-user-idp-0-file-data")},
				{Action: contract.ActionDelete, Source: secret("v4-0-config-user-idp-1-file-data"), Disposition: routing.Apply, Provenance: "recovered"},
			},
		},
		{
			name: "a member whose recovered Delete was not placed",
			entries: []plans.Entry{
				{Action: contract.ActionCreate, Source: secret("v4-0-config-user-idp-0-file-data")},
				{Action: contract.ActionDelete, Source: secret("v4-0-config-user-idp-1-file-data"), Disposition: routing.Dropped, Rule: recovery.Rule, Provenance: "recovered"},
			},
			want: []contract.Identity{secret("v4-0-config-user-idp-1-file-data")},
		},
		{
			name: "a family not written at all says nothing of its members",
			entries: []plans.Entry{
				{Action: contract.ActionCreate, Source: secret("v4-0-config-user-idp-0-file-data")},
				{Action: contract.ActionCreate, Source: secret("v4-0-config-user-idp-1-file-data")},
			},
		},
		{
			name: "a deletion is not a write of the family",
			entries: []plans.Entry{
				{Action: contract.ActionDelete, Source: secret("v4-0-config-user-idp-0-file-data")},
			},
		},
		{
			name:    "exact declarations are not families",
			entries: []plans.Entry{{Action: contract.ActionApply, Source: secret("v4-0-config-user-idp-0-file-data")}},
			want:    []contract.Identity{secret("v4-0-config-user-idp-1-file-data")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &plans.Plan{Entries: tc.entries}
			if got := p.LeftBehind(placed, nil, decls); !slices.Equal(got, tc.want) {
				t.Errorf("LeftBehind = %v, want %v", got, tc.want)
			}
		})
	}
}
