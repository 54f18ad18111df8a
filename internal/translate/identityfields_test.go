package translate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// planAlone plans m alone with engine and returns its entry. With a wantRule, the entry
// must be rejected by that rule with a reason naming wantReason, and planAlone reports
// false: there is nothing more to check. Otherwise the entry must be applied (the test
// stops if it is not) and planAlone reports true.
func planAlone(t *testing.T, engine translate.Engine, m contract.Mutation, wantRule, wantReason string) (plans.Entry, bool) {
	t.Helper()
	e := engine.Plan(&contract.OutputDir{Mutations: []contract.Mutation{m}}).Entries[0]
	if wantRule != "" {
		if e.Disposition != routing.Rejected || e.Rule != wantRule || !strings.Contains(e.Reason, wantReason) {
			t.Errorf("%s by %s: %s; want rejected by %s naming %q", e.Disposition, e.Rule, e.Reason, wantRule, wantReason)
		}
		return e, false
	}
	if e.Disposition != routing.Apply {
		t.Fatalf("%s by %s: %s", e.Disposition, e.Rule, e.Reason)
	}
	return e, true
}

func TestPatchIdentityFields(t *testing.T) {
	for _, tc := range []struct {
		name  string
		patch transform.Patch
		want  []string
	}{
		{"labels only", transform.Patch{StrategicMerge: "metadata: {labels: {a: b}}\nspec: {replicas: 1}\n"}, nil},
		{"a rename", transform.Patch{StrategicMerge: "metadata: {name: control-plane-operator}\n"}, []string{"metadata.name"}},
		{"kind and apiVersion", transform.Patch{StrategicMerge: "apiVersion: v1\nkind: Secret\n"}, []string{"apiVersion", "kind"}},
		{"owners and namespace", transform.Patch{StrategicMerge: "metadata: {namespace: kube-system, ownerReferences: []}\n"}, []string{"metadata.namespace", "metadata.ownerReferences"}},
		{"a $patch directive in metadata", transform.Patch{StrategicMerge: "metadata: {$patch: replace, labels: {a: b}}\n"}, []string{"metadata.name"}},
		{"json6902: rename", transform.Patch{JSON6902: "[{op: replace, path: /metadata/name, value: x}]"}, []string{"metadata.name"}},
		{"json6902: an owner appended", transform.Patch{JSON6902: "[{op: add, path: /metadata/ownerReferences/-, value: {}}]"}, []string{"metadata.ownerReferences"}},
		{"json6902: metadata replaced", transform.Patch{JSON6902: "[{op: replace, path: /metadata, value: {}}]"}, []string{"metadata.name"}},
		{"json6902: move from the name", transform.Patch{JSON6902: "[{op: move, from: /metadata/name, path: /data/name}]"}, []string{"metadata.name"}},
		{"json6902: a test reads only", transform.Patch{JSON6902: "[{op: test, path: /metadata/name, value: x}, {op: add, path: /data/a, value: b}]"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.patch.IdentityFields()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("IdentityFields() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestIdentityFieldsInPlans: operator-supplied ownerReferences are stripped on the management
// cluster (refused where no profile strips them) and kept on the guest, the operator's own
// cluster, where its owners live; a transform that changes what or whose an object is makes
// the plan refuse it, the field named.
func TestIdentityFieldsInPlans(t *testing.T) {
	const hcp = "clusters-example"
	owned := func(class contract.Class) contract.Mutation {
		m := policyMutation(contract.ActionApply, "", "configmaps", "openshift-sample", "settings",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: openshift-sample\n  ownerReferences:\n"+
				"  - {apiVersion: hypershift.openshift.io/v1beta1, kind: HostedControlPlane, name: other-tenant, uid: 0a0a, blockOwnerDeletion: true}\ndata: {a: b}\n")
		m.Class = class
		return m
	}
	patch := func(p transform.Patch) []transform.Transform {
		p.Name = "config-patch"
		p.Match = routing.Match{Resource: "configmaps"}
		tr, err := p.Transform()
		if err != nil {
			t.Fatal(err)
		}
		return append(hosted.HyperShiftProfile(), tr)
	}
	engine := func(transforms []transform.Transform) translate.Engine {
		e := hostedEngine(hcp, transforms...)
		e.Policy = &policy.Policy{}
		return e
	}
	for _, tc := range []struct {
		name       string
		engine     translate.Engine
		m          contract.Mutation
		wantRule   string // rejected by; "" applied
		wantReason string
		wantOwners bool
	}{
		{"management: stripped by the profile", engine(hosted.HyperShiftProfile()), owned(contract.ClassManagement), "", "", false},
		{"management without the profile: refused", engine(nil), owned(contract.ClassManagement), policy.RuleOwnerReferences, "metadata.ownerReferences", false},
		{"guest: the operator's own cluster keeps its owners", engine(hosted.HyperShiftProfile()), owned(contract.ClassUserWorkload), "", "", true},
		{"a patch that renames", engine(patch(transform.Patch{StrategicMerge: "metadata: {name: control-plane-operator}\n"})), owned(contract.ClassManagement),
			policy.RuleIdentityFields, "metadata.name: transform config-patch changes it", false},
		{"a patch that moves", engine(patch(transform.Patch{JSON6902: "[{op: replace, path: /metadata/namespace, value: kube-system}]"})), owned(contract.ClassUserWorkload),
			policy.RuleIdentityFields, "metadata.namespace: transform config-patch", false},
		{"a patch that adds owners after the profile", engine(patch(transform.Patch{JSON6902: "[{op: add, path: /metadata/ownerReferences, value: [{apiVersion: v1, kind: Namespace, name: x, uid: y}]}]"})), owned(contract.ClassManagement),
			policy.RuleIdentityFields, "metadata.ownerReferences: transform config-patch", false},
		{"a patch of the kind", engine(patch(transform.Patch{StrategicMerge: "kind: Secret\n"})), owned(contract.ClassUserWorkload),
			policy.RuleIdentityFields, "kind: transform config-patch", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, applied := planAlone(t, tc.engine, tc.m, tc.wantRule, tc.wantReason)
			if !applied {
				return
			}
			if got := len(e.Object.GetOwnerReferences()) > 0; got != tc.wantOwners {
				t.Errorf("ownerReferences %v, want present: %v", e.Object.GetOwnerReferences(), tc.wantOwners)
			}
		})
	}
}
