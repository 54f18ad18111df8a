package translate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest/synth"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// TestPlannerStreams: a planner fed one mutation at a time, in any order, with a settled
// function, makes the plan Engine.Plan makes (plan.json is the same), settles every entry
// exactly once, and settles early what no later stage reads. With a spill, the entries
// settled early wait in it: Plan reads them back, and WritePlan writes the same plan.json
// as WritePlanJSON does with the plan of Engine.Plan.
func TestPlannerStreams(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		mix          synth.Mix
		spill        bool
		wantEarly    bool
	}{
		{"standalone", standaloneConfig, synth.CAO(), false, true},
		{"hosted", hostedConfig, synth.CAO(), false, false},
		{"standalone, spilled", standaloneConfig, synth.CAO(), true, true},
		{"hosted, spilled", hostedConfig, synth.CAO(), true, false},
		// Every workload with an account, RBAC and events of its own: the hosted planner
		// drops the operator's objects of what no later check reads as it finishes them.
		{"hosted, guest identities", hostedConfig, synth.GuestIdentities(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			engine := syntheticEngine(t, tc.config)
			dir := filepath.Join(t.TempDir(), "out")
			if err := tc.mix.Write(dir, 500); err != nil {
				t.Fatal(err)
			}
			out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantPlan := engine.Plan(out)
			want, err := json.Marshal(wantPlan)
			if err != nil {
				t.Fatal(err)
			}
			var wantJSON bytes.Buffer
			if err := plans.WriteJSON(&wantJSON, wantPlan); err != nil {
				t.Fatal(err)
			}

			// The reader's order, not sorted, shuffled further; read again for each planner
			// (a planner drops the bodies of what it settles).
			stream := func() []*contract.Mutation {
				var streamed []*contract.Mutation
				if _, err := contract.WalkOutputDir(context.Background(), dir, contract.ReadOptions{}, func(m *contract.Mutation) error {
					streamed = append(streamed, m)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				rand.New(rand.NewPCG(1, 2)).Shuffle(len(streamed), func(i, j int) { streamed[i], streamed[j] = streamed[j], streamed[i] })
				return streamed
			}
			key := func(e *plans.Entry) string {
				return e.SourcePath + " " + e.Source.String() + " " + string(e.Action) + " " + e.Target.Cluster + " " + e.Rule
			}
			// The files a writer writes: the target mutation's body, by entry.
			bodies := func(e *plans.Entry, into map[string]string) {
				if e.Disposition != routing.Apply || e.Mutation == nil {
					return
				}
				b, err := e.Mutation.Bytes()
				if err != nil {
					t.Fatalf("%s: %v", key(e), err)
				}
				into[key(e)] = string(b)
			}
			wantBodies := map[string]string{}
			for i := range wantPlan.Entries {
				bodies(&wantPlan.Entries[i], wantBodies)
			}
			settled := map[string]int{}
			gotBodies := map[string]string{}
			early := 0
			adding := true
			newPlanner := func() *translate.Planner {
				p := engine.Planner(func(e *plans.Entry) error {
					settled[key(e)]++
					bodies(e, gotBodies)
					if adding {
						early++
					}
					return nil
				})
				if tc.spill {
					f, err := os.CreateTemp(t.TempDir(), "spill")
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { f.Close() })
					p.SpillTo(f)
				}
				for _, m := range stream() {
					p.Add(m)
				}
				adding = false
				return p
			}
			p := newPlanner()
			plan := p.Plan()
			if err := p.Err(); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(plan)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("the streamed plan differs from Engine.Plan's:\n got %.600s\nwant %.600s", got, want)
			}
			for k, n := range settled {
				if n != 1 {
					t.Errorf("%s settled %d times", k, n)
				}
			}
			if len(settled) != len(plan.Entries) {
				t.Errorf("%d entries settled, the plan has %d", len(settled), len(plan.Entries))
			}
			if diff := cmp.Diff(wantBodies, gotBodies); diff != "" {
				t.Errorf("the settled bodies differ from Engine.Plan's (-want +got):\n%s", diff)
			}
			if early > 0 != tc.wantEarly {
				t.Errorf("%d entries settled while adding; want some: %v", early, tc.wantEarly)
			}

			// WritePlan, on a planner fed the same mutations, writes the same plan.json.
			adding = true
			clear(settled)
			var gotJSON bytes.Buffer
			written, err := newPlanner().WritePlan(&gotJSON)
			if err != nil {
				t.Fatal(err)
			}
			if gotJSON.String() != wantJSON.String() {
				t.Fatalf("WritePlan's plan.json differs from plans.WriteJSON's:\n got %.600s\nwant %.600s", gotJSON.String(), wantJSON.String())
			}
			if written.Summary != wantPlan.Summary {
				t.Errorf("WritePlan's summary %+v, want %+v", written.Summary, wantPlan.Summary)
			}
			if len(settled) != len(plan.Entries) {
				t.Errorf("WritePlan: %d entries settled, the plan has %d", len(settled), len(plan.Entries))
			}
		})
	}
}

// TestPlannerSpillsServiceAccounts: a standalone planner with a spill settles service
// accounts and Secrets that carry no token while adding them, and still knows the accounts
// it wrote: a token Secret naming one of them is applied, one naming another account and a
// patch of the token's annotation are refused, exactly as Engine.Plan decides.
func TestPlannerSpillsServiceAccounts(t *testing.T) {
	const ns = "openshift-sample"
	token := func(name, account string) contract.Mutation {
		return policyMutation(contract.ActionApply, "", "secrets", ns, name,
			"apiVersion: v1\nkind: Secret\nmetadata: {name: "+name+", namespace: "+ns+", annotations: {kubernetes.io/service-account.name: "+account+"}}\ntype: kubernetes.io/service-account-token\n")
	}
	patch := policyMutation(contract.ActionPatch, "", "secrets", ns, "patched", `{"metadata":{"annotations":{"kubernetes.io/service-account.name":"other"}}}`)
	patch.Metadata.PatchType = contract.PatchTypeMerge
	ms := []contract.Mutation{
		token("a-token", "sample"),
		token("b-token", "other"),
		policyMutation(contract.ActionApply, "", "secrets", ns, "opaque", "apiVersion: v1\nkind: Secret\nmetadata: {name: opaque, namespace: "+ns+"}\ntype: Opaque\n"),
		patch,
		policyMutation(contract.ActionApply, "", "serviceaccounts", ns, "sample", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sample, namespace: "+ns+"}\n"),
	}
	for i := range ms {
		ms[i].Path = fmt.Sprintf("Management/%d-body.yaml", i) // a reader's paths: the plan's order
	}
	engine := translate.Standalone("op", nil)
	engine.Policy = &policy.Policy{}
	want := engine.Plan(&contract.OutputDir{Mutations: slices.Clone(ms)})

	reversed := slices.Clone(ms)
	slices.Reverse(reversed) // the account after the Secrets that name it
	got, early := planSpilled(t, engine, reversed)
	if gotJSON, wantJSON := planJSON(got), planJSON(want); gotJSON != wantJSON {
		t.Fatalf("the spilled plan differs from Engine.Plan's:\n got %s\nwant %s", gotJSON, wantJSON)
	}
	wantDisposition := map[string]routing.Disposition{"a-token": routing.Apply, "b-token": routing.Rejected, "opaque": routing.Apply, "patched": routing.Rejected, "sample": routing.Apply}
	for _, e := range got.Entries {
		if e.Disposition != wantDisposition[e.Source.Name] {
			t.Errorf("%s: %s (%s), want %s", e.Source, e.Disposition, e.Reason, wantDisposition[e.Source.Name])
		}
	}
	if want := map[string]bool{"opaque": true, "sample": true}; !maps.Equal(early, want) {
		t.Errorf("settled while adding: %v, want %v", early, want)
	}
}

// TestPlannerSpillsRoles: a standalone planner with a spill settles Roles and ClusterRoles
// while adding them when no RBAC ceiling may refuse them, and the bindings that refer to them
// are still judged on their rules (RuleRBACContainment), exactly as Engine.Plan judges them,
// whichever comes first. Under a ceiling the roles wait for the plan.
func TestPlannerSpillsRoles(t *testing.T) {
	const ns = "openshift-sample"
	safe := "- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n"
	ms := []contract.Mutation{
		clusterRole("safe", "rules:\n"+safe),
		clusterRole("escalating", "rules:\n- {apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [escalate]}\n"),
		clusterRoleBinding("to-safe", "safe"),
		clusterRoleBinding("to-escalating", "escalating"),
		clusterRoleBinding("to-elsewhere", "not-in-the-plan"),
		role(ns, "own", safe),
		roleBinding(ns, "own", "Role", "own"),
	}
	for i := range ms {
		ms[i].Path = fmt.Sprintf("Management/%d-body.yaml", i) // a reader's paths: the plan's order
	}
	for name, tc := range map[string]struct {
		policy    *policy.Policy
		wantEarly map[string]bool
	}{
		"no ceiling": {&policy.Policy{}, map[string]bool{"safe": true, "escalating": true, "own": true}},
		"a ceiling":  {&policy.Policy{RBAC: &policy.RBACCeiling{Rules: []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}}}, map[string]bool{}},
	} {
		t.Run(name, func(t *testing.T) {
			engine := translate.Standalone("op", nil)
			engine.Policy = tc.policy
			want := engine.Plan(&contract.OutputDir{Mutations: slices.Clone(ms)})
			for _, order := range []string{"forward", "reverse"} {
				ordered := slices.Clone(ms)
				if order == "reverse" {
					slices.Reverse(ordered)
				}
				got, early := planSpilled(t, engine, ordered)
				if gotJSON, wantJSON := planJSON(got), planJSON(want); gotJSON != wantJSON {
					t.Fatalf("%s: the spilled plan differs from Engine.Plan's:\n got %s\nwant %s", order, gotJSON, wantJSON)
				}
				if !maps.Equal(early, tc.wantEarly) {
					t.Errorf("%s: settled while adding: %v, want %v", order, early, tc.wantEarly)
				}
			}
			rejected := map[string]bool{}
			for _, e := range want.Entries {
				if e.Disposition == routing.Rejected {
					rejected[e.Source.Name] = true
				}
			}
			if name == "no ceiling" && !maps.Equal(rejected, map[string]bool{"to-escalating": true, "to-elsewhere": true}) {
				t.Errorf("rejected %v, want the bindings of broad subjects to the escalating role and to one outside the plan", rejected)
			}
		})
	}
}

// planSpilled feeds ms, in their order, to a planner of engine that spills to a temporary
// file, and returns its plan and the names of the entries it settled while adding.
func planSpilled(t *testing.T, engine translate.Engine, ms []contract.Mutation) (*plans.Plan, map[string]bool) {
	t.Helper()
	early := map[string]bool{}
	adding := true
	p := engine.Planner(func(e *plans.Entry) error {
		if adding {
			early[e.Source.Name] = true
		}
		return nil
	})
	f, err := os.CreateTemp(t.TempDir(), "spill")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p.SpillTo(f)
	for i := range ms {
		m := ms[i]
		p.Add(&m)
	}
	adding = false
	got := p.Plan()
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	return got, early
}

// planJSON is a plan as json.Marshal writes it, to compare two plans whole.
func planJSON(plan *plans.Plan) string {
	b, _ := json.Marshal(plan)
	return string(b)
}

// TestPlannerKeepsWhatPlanChecksRead: the hosted planner lets go of the operator's object of
// an entry as soon as it is finished, unless a check of the whole plan reads it later: a
// binding renamed into the HCP namespace is bindable by the role it named as the operator
// wrote it (the RBAC ceiling's checkBinding), which the streamed plan decides as
// Engine.Plan does.
func TestPlannerKeepsWhatPlanChecksRead(t *testing.T) {
	const hcp = "clusters-example"
	engine := hostedEngine(hcp)
	engine.Policy = &policy.Policy{RBAC: &policy.RBACCeiling{Rules: operatorCeiling.Rules,
		BindableRoles: []policy.RoleRef{{Kind: policy.KindRole, Namespace: "openshift-sample", Name: "reader"}}}}
	mutations := func() []contract.Mutation {
		return []contract.Mutation{
			roleBinding("openshift-sample", "reads", "Role", "reader"),
			policyMutation(contract.ActionApply, "", "configmaps", "openshift-sample", "settings",
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: openshift-sample}\n"),
		}
	}
	want := engine.Plan(&contract.OutputDir{Mutations: mutations()})
	streamed := mutations()
	p := engine.Planner(func(*plans.Entry) error { return nil })
	for i := range streamed {
		p.Add(&streamed[i])
	}
	got := p.Plan()
	for i, e := range got.Entries {
		if e.Disposition != routing.Apply {
			t.Errorf("%s: %s by %s: %s; want it applied", e.Source, e.Disposition, e.Rule, e.Reason)
		}
		if w := want.Entries[i]; e.Disposition != w.Disposition || e.Reason != w.Reason {
			t.Errorf("%s: streamed %s (%s), Engine.Plan %s (%s)", e.Source, e.Disposition, e.Reason, w.Disposition, w.Reason)
		}
	}
	if streamed[1].Object != nil || streamed[1].Body != nil {
		t.Error("the ConfigMap's content is still held after it was finished")
	}
}
