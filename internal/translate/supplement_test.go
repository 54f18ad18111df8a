package translate_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// TestSupplement shows the configuration's supplement to an operator's output-resources at
// work: what it declares is placed (an Unspecified mutation in the class it names) and says
// so; what neither declares is still rejected.
func TestSupplement(t *testing.T) {
	secret := func(class contract.Class, name string) contract.Mutation {
		m := policyMutation(contract.ActionApply, "", "secrets", "openshift-authentication", name,
			"apiVersion: v1\nkind: Secret\nmetadata: {name: "+name+", namespace: openshift-authentication}\n")
		m.Class = class
		return m
	}
	exact := func(name string) contract.ExactResourceID {
		return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "secrets"}, Namespace: "openshift-authentication", Name: name}
	}
	own := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{exact("session")}}}
	supplement := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{exact("idp-0")}}}
	family := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{exact("idp-*-file-data")}}}
	tests := []struct {
		name           string
		mutation       contract.Mutation
		supplement     *contract.OutputResources
		wantDispo      routing.Disposition
		wantRule       string
		wantClass      contract.Class
		wantDeclaredBy string
	}{
		{"declared by the operator", secret(contract.ClassManagement, "session"), supplement, routing.Apply, "standalone", contract.ClassManagement, ""},
		{"Unspecified, declared by the supplement: placed in its class", secret(contract.ClassUnspecified, "idp-0"), supplement, routing.Apply, "standalone", contract.ClassManagement, plans.DeclaredBySupplement},
		{"in a class folder, declared by the supplement only", secret(contract.ClassManagement, "idp-0"), supplement, routing.Apply, "standalone", contract.ClassManagement, plans.DeclaredBySupplement},
		{"Unspecified, no supplement", secret(contract.ClassUnspecified, "idp-0"), nil, routing.Rejected, plans.RuleUnspecified, contract.ClassUnspecified, ""},
		{"Unspecified, declared by nobody", secret(contract.ClassUnspecified, "idp-1"), supplement, routing.Rejected, plans.RuleUnspecified, contract.ClassUnspecified, ""},
		{"in a class folder, declared by nobody", secret(contract.ClassManagement, "idp-1"), supplement, routing.Rejected, plans.RuleDeclaredOutputs, contract.ClassManagement, ""},
		{"Unspecified, a member of a family the supplement declares by pattern", secret(contract.ClassUnspecified, "idp-12-file-data"), family, routing.Apply, "standalone", contract.ClassManagement, plans.DeclaredBySupplement},
		{"Unspecified, outside the family's pattern", secret(contract.ClassUnspecified, "idp-1-client-secret"), family, routing.Rejected, plans.RuleUnspecified, contract.ClassUnspecified, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := translate.Standalone("cluster-authentication-operator", own)
			e.Supplement = tc.supplement
			p := e.Plan(&contract.OutputDir{Mutations: []contract.Mutation{tc.mutation}})
			got := p.Entries[0]
			if got.Disposition != tc.wantDispo || got.Rule != tc.wantRule || got.Class != tc.wantClass || got.DeclaredBy != tc.wantDeclaredBy {
				t.Errorf("entry: %s by %s, class %s, declared by %q (%s); want %s by %s, class %s, declared by %q",
					got.Disposition, got.Rule, got.Class, got.DeclaredBy, got.Reason, tc.wantDispo, tc.wantRule, tc.wantClass, tc.wantDeclaredBy)
			}
			if got.Disposition == routing.Apply && got.Mutation.Class != tc.wantClass {
				t.Errorf("the mutation to write is of class %s, want %s", got.Mutation.Class, tc.wantClass)
			}
		})
	}
}
