package translate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// TestGuestNamespaces: a namespace the management side absorbs is created on the guest when
// the operator's guest objects live in it, once, by a named rule; not otherwise.
func TestGuestNamespaces(t *testing.T) {
	hosted := hostedEngine("clusters-example")
	ns := func(class contract.Class, name string) contract.Mutation {
		m := policyMutation(contract.ActionCreate, "", "namespaces", "", name,
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: "+name+", labels: {openshift.io/cluster-monitoring: \"true\"}}\n")
		m.Class = class
		return m
	}
	guestObject := func(ns, name string) contract.Mutation {
		m := policyMutation(contract.ActionApply, "", "configmaps", ns, name,
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: "+ns+"}\n")
		m.Class = contract.ClassUserWorkload
		return m
	}
	mgmt, guest := contract.ClassManagement, contract.ClassUserWorkload
	cm := func(ns string) contract.ExactResourceID {
		return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: ns, Name: "a"}
	}
	declaresNS := &contract.OutputResources{
		ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
			{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "namespaces"}, Name: "openshift-oauth-apiserver"},
		}},
		UserWorkloadResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{cm("openshift-oauth-apiserver"), cm("openshift-config-managed")}},
	}
	tests := []struct {
		name      string
		declared  *contract.OutputResources
		mutations []contract.Mutation
		want      []string // namespaces created on the guest by the rule
	}{
		{"declared as a Management output, not written this run: a bare namespace", declaresNS, []contract.Mutation{guestObject("openshift-oauth-apiserver", "a")}, []string{"openshift-oauth-apiserver"}},
		{"absorbed, two guest objects in it: one namespace", nil, []contract.Mutation{ns(mgmt, "openshift-oauth-apiserver"), guestObject("openshift-oauth-apiserver", "a"), guestObject("openshift-oauth-apiserver", "b")}, []string{"openshift-oauth-apiserver"}},
		{"absorbed, no guest object in it", nil, []contract.Mutation{ns(mgmt, "openshift-authentication"), guestObject("elsewhere", "a")}, nil},
		{"not declared, not written: the operator does not own it", declaresNS, []contract.Mutation{guestObject("openshift-config-managed", "a")}, nil},
		{"the operator writes it on the guest itself", nil, []contract.Mutation{ns(mgmt, "shared"), ns(guest, "shared"), guestObject("shared", "a")}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := hosted
			e.Declared = tc.declared
			p := e.Plan(&contract.OutputDir{Mutations: tc.mutations})
			if p.Summary.Rejected > 0 {
				t.Fatalf("rejected: %+v", p.Rejected())
			}
			var got []string
			for _, e := range p.Entries {
				if e.Rule != plans.RuleGuestNamespace {
					continue
				}
				got = append(got, e.Target.Name)
				if tc.declared != nil {
					continue // a bare namespace: no labels of the operator's
				}
				if e.Target.Cluster != routing.ClusterGuest || e.Action != contract.ActionCreate || e.Class != guest || e.Mutation == nil || e.Object == nil {
					t.Errorf("entry %+v: want a Create of class UserWorkload on the guest, with its object", e)
				}
				if e.Object.GetLabels()["openshift.io/cluster-monitoring"] != "true" {
					t.Errorf("the operator's labels are lost: %v", e.Object.GetLabels())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("guest namespaces (-want +got):\n%s", diff)
			}
		})
	}
}
