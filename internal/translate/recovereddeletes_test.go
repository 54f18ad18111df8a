package translate_test

import (
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/recovery"
	"github.com/topolayer/topolayer/routing"
)

// refusedDelete is the error a controller gets back when the contract's manifest client
// refuses its Delete of a namespaced object (spec §2.5).
func refusedDelete(ns, resource, name string) string {
	return `an error on the server ("request namespace \"` + ns + `\" does not equal body namespace \"\"") has prevented the request from succeeding (delete ` + resource + ` ` + name + `)`
}

// recoveredResults is a controller-results.yaml whose resource syncer failed on two refused
// Deletes and whose other controller failed otherwise.
func recoveredResults(messages ...string) *contract.ControllerResults {
	errs := make([]contract.ErrorDetails, len(messages))
	for i, m := range messages {
		errs[i] = contract.ErrorDetails{Message: m}
	}
	return &contract.ControllerResults{ControllerResults: []contract.ControllerResult{
		{ControllerName: "other", Status: contract.ControllerFailed, Errors: []contract.ErrorDetails{{Message: `secret "x" not found`}}},
		{ControllerName: "resourceSyncer", Status: contract.ControllerFailed, Errors: errs},
	}}
}

func TestRecoveredDeletes(t *testing.T) {
	const ns, login = "openshift-authentication", "v4-0-config-user-template-login"
	declared := &contract.OutputResources{
		ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
			{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "secrets"}, Namespace: ns, Name: "v4-0-config-user-template-*"},
			{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: ns, Name: "oauth-openshift"},
		}},
		UserWorkloadResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
			{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: ns, Name: "written"},
		}},
	}
	written := contract.Mutation{
		Class:    contract.ClassUserWorkload,
		Metadata: contract.Metadata{Action: contract.ActionApply, ControllerInstanceName: "c", FieldManager: "c", Namespace: ns, Name: "written", ResourceType: contract.ResourceType{Version: "v1", Resource: "configmaps"}},
		Body:     []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: written\n  namespace: " + ns + "\n"),
		Path:     "UserWorkload/Apply/namespaces/" + ns + "/core/configmaps/0000-body-written.yaml",
	}
	secret := contract.Identity{Version: "v1", Resource: "secrets", Namespace: ns, Name: login}
	provenance := `recovered from the error of controller "resourceSyncer" in controller-results.yaml: the contract cannot record the Delete of a namespaced object (spec §2.5)`
	type want struct {
		Class       contract.Class
		Action      contract.Action
		Source      contract.Identity
		Target      plans.Target
		Disposition routing.Disposition
		Rule        string
		Provenance  string
		Warnings    int
		Body        string
	}
	standalone := standaloneEngine(declared, nil)
	hosted := hostedEngine("hcp")
	hosted.Declared = declared
	status := func(action contract.Action, conditionStatus, message string) contract.Mutation {
		body := "apiVersion: operator.openshift.io/v1\nkind: Authentication\nmetadata:\n  name: cluster\nstatus:\n  conditions:\n  - type: ResourceSyncControllerDegraded\n    status: \"" + conditionStatus + "\"\n    reason: Error\n    message: '" + message + "'\n"
		return contract.Mutation{
			Class:    contract.ClassManagement,
			Metadata: contract.Metadata{Action: action, ControllerInstanceName: "TODO-resourceSyncer", FieldManager: "TODO-resourceSyncer", Name: "cluster", ResourceType: contract.ResourceType{Group: "operator.openshift.io", Version: "v1", Resource: "authentications"}},
			Body:     []byte(body),
			Path:     "Management/" + string(action) + "/cluster-scoped-resources/operator.openshift.io/authentications/0000-body-cluster.yaml",
		}
	}
	authentication := contract.Identity{Group: "operator.openshift.io", Version: "v1", Resource: "authentications", Name: "cluster"}
	fromCondition := `recovered from the error of controller "TODO-resourceSyncer" in condition "ResourceSyncControllerDegraded" of authentications.operator.openshift.io cluster (Management/ApplyStatus/cluster-scoped-resources/operator.openshift.io/authentications/0000-body-cluster.yaml): the contract cannot record the Delete of a namespaced object (spec §2.5)`
	declared.ManagementResources.ExactResources = append(declared.ManagementResources.ExactResources,
		contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "operator.openshift.io", Version: "v1", Resource: "authentications"}, Name: "cluster"})
	loginWrite := written
	loginWrite.Class = contract.ClassManagement
	loginWrite.Metadata.Name, loginWrite.Metadata.ResourceType.Resource = login, "secrets"
	loginWrite.Body = []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + login + "\n  namespace: " + ns + "\n")
	loginWrite.Path = "Management/Apply/namespaces/" + ns + "/core/secrets/0000-body-" + login + ".yaml"
	cases := map[string]struct {
		engine   translate.Engine
		extra    []contract.Mutation
		messages []string
		want     []want
	}{
		"from the condition of a status apply": {
			engine:   standalone,
			extra:    []contract.Mutation{status(contract.ActionApplyStatus, "True", refusedDelete(ns, "secrets", login))},
			messages: []string{},
			want: []want{
				{Class: contract.ClassManagement, Action: contract.ActionApplyStatus, Source: authentication, Target: plans.Target{Cluster: "cluster", Identity: authentication}, Disposition: routing.Apply, Rule: "standalone"},
				{Class: contract.ClassManagement, Action: contract.ActionDelete, Source: secret, Target: plans.Target{Cluster: "cluster", Identity: secret}, Disposition: routing.Apply, Rule: "standalone", Provenance: fromCondition, Body: "apiVersion: v1\nkind: DeleteOptions\n"},
				{Class: contract.ClassUserWorkload, Action: contract.ActionApply, Source: written.Identity(), Target: plans.Target{Cluster: "cluster", Identity: written.Identity()}, Disposition: routing.Apply, Rule: "standalone"},
			},
		},
		"not from a condition that is not True, nor from a whole status update": {
			engine: standalone,
			extra: []contract.Mutation{
				status(contract.ActionApplyStatus, "False", refusedDelete(ns, "secrets", login)),
				status(contract.ActionUpdateStatus, "True", refusedDelete(ns, "secrets", login)),
			},
			want: []want{
				{Class: contract.ClassManagement, Action: contract.ActionApplyStatus, Source: authentication, Target: plans.Target{Cluster: "cluster", Identity: authentication}, Disposition: routing.Apply, Rule: "standalone"},
				{Class: contract.ClassManagement, Action: contract.ActionUpdateStatus, Source: authentication, Target: plans.Target{Cluster: "cluster", Identity: authentication}, Disposition: routing.Apply, Rule: "standalone"},
				{Class: contract.ClassUserWorkload, Action: contract.ActionApply, Source: written.Identity(), Target: plans.Target{Cluster: "cluster", Identity: written.Identity()}, Disposition: routing.Apply, Rule: "standalone"},
			},
		},
		"written in the same run: dropped": {
			engine:   standalone,
			extra:    []contract.Mutation{loginWrite},
			messages: []string{refusedDelete(ns, "secrets", login)},
			want: []want{
				{Class: contract.ClassManagement, Action: contract.ActionApply, Source: secret, Target: plans.Target{Cluster: "cluster", Identity: secret}, Disposition: routing.Apply, Rule: "standalone"},
				{Class: contract.ClassUserWorkload, Action: contract.ActionApply, Source: written.Identity(), Target: plans.Target{Cluster: "cluster", Identity: written.Identity()}, Disposition: routing.Apply, Rule: "standalone"},
				{Class: contract.ClassUnspecified, Action: contract.ActionDelete, Source: contract.Identity{Resource: "secrets", Namespace: ns, Name: login}, Disposition: routing.Dropped, Rule: recovery.Rule, Provenance: provenance, Warnings: 1},
			},
		},
		"a refused Delete of a declared Secret, aggregated twice": {
			engine:   standalone,
			messages: []string{"[" + refusedDelete(ns, "secrets", login) + ", " + refusedDelete(ns, "secrets", login) + "]"},
			want: []want{
				{Class: contract.ClassManagement, Action: contract.ActionDelete, Source: secret, Target: plans.Target{Cluster: "cluster", Identity: secret}, Disposition: routing.Apply, Rule: "standalone", Provenance: provenance, Body: "apiVersion: v1\nkind: DeleteOptions\n"},
				{Class: contract.ClassUserWorkload, Action: contract.ActionApply, Source: written.Identity(), Target: plans.Target{Cluster: "cluster", Identity: written.Identity()}, Disposition: routing.Apply, Rule: "standalone"},
			},
		},
		"a group resource, renamed into the hosted control plane's namespace": {
			engine:   hosted,
			messages: []string{refusedDelete(ns, "deployments.apps", "oauth-openshift")},
			want: []want{
				{Class: contract.ClassManagement, Action: contract.ActionDelete, Source: contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: ns, Name: "oauth-openshift"}, Target: plans.Target{Cluster: "management", Identity: contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "hcp", Name: "openshift-authentication--oauth-openshift"}}, Disposition: routing.Apply, Rule: "hosted/management", Provenance: provenance, Body: "apiVersion: apps/v1\nkind: DeleteOptions\n"},
				{Class: contract.ClassUserWorkload, Action: contract.ActionApply, Source: written.Identity(), Target: plans.Target{Cluster: "guest", Identity: written.Identity()}, Disposition: routing.Apply, Rule: "hosted/user-workload"},
			},
		},
		"undeclared: dropped with a warning, not refused": {
			engine:   standalone,
			messages: []string{refusedDelete(ns, "secrets", "v4-0-config-user-idp-0-file-data")},
			want: []want{
				{Class: contract.ClassUserWorkload, Action: contract.ActionApply, Source: written.Identity(), Target: plans.Target{Cluster: "cluster", Identity: written.Identity()}, Disposition: routing.Apply, Rule: "standalone"},
				{Class: contract.ClassUnspecified, Action: contract.ActionDelete, Source: contract.Identity{Resource: "secrets", Namespace: ns, Name: "v4-0-config-user-idp-0-file-data"}, Disposition: routing.Dropped, Rule: recovery.Rule, Provenance: provenance, Warnings: 1},
			},
		},
		"a resource discovery does not know": {
			engine:   standalone,
			messages: []string{refusedDelete(ns, "widgets.example.com", "w")},
			want: []want{
				{Class: contract.ClassUserWorkload, Action: contract.ActionApply, Source: written.Identity(), Target: plans.Target{Cluster: "cluster", Identity: written.Identity()}, Disposition: routing.Apply, Rule: "standalone"},
				{Class: contract.ClassUnspecified, Action: contract.ActionDelete, Source: contract.Identity{Group: "example.com", Resource: "widgets", Namespace: ns, Name: "w"}, Disposition: routing.Dropped, Rule: recovery.Rule, Provenance: provenance, Warnings: 1},
			},
		},
		"another error recovers nothing": {
			engine:   standalone,
			messages: []string{`"oauth-openshift/ns.yaml" (string): ` + refusedDelete(ns, "namespaces", ns)[:150]},
			want: []want{
				{Class: contract.ClassUserWorkload, Action: contract.ActionApply, Source: written.Identity(), Target: plans.Target{Cluster: "cluster", Identity: written.Identity()}, Disposition: routing.Apply, Rule: "standalone"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := &contract.OutputDir{Mutations: append(slices.Clone(tc.extra), written), ControllerResults: recoveredResults(tc.messages...), HasControllerResults: true}
			plan := tc.engine.Plan(out)
			var got []want
			for _, e := range plan.Entries {
				g := want{Class: e.Class, Action: e.Action, Source: e.Source, Target: e.Target, Disposition: e.Disposition, Rule: e.Rule, Provenance: e.Provenance, Warnings: len(e.Warnings)}
				if e.Provenance != "" && e.Mutation != nil {
					g.Body = string(e.Mutation.Body)
				}
				got = append(got, g)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if len(plan.Rejected()) != 0 {
				t.Errorf("rejected: %+v", plan.Rejected())
			}

			// A streaming planner, told the controller results once the walk is over, makes
			// the same plan, spilled or not.
			for _, spill := range []bool{false, true} {
				var settled int
				p := tc.engine.Planner(func(*plans.Entry) error { settled++; return nil })
				if spill {
					f, err := os.CreateTemp(t.TempDir(), "spill")
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					p.SpillTo(f)
				}
				for _, m := range out.Mutations {
					p.Add(&m)
				}
				p.AddControllerResults(out.ControllerResults)
				streamed := p.Plan()
				if err := p.Err(); err != nil {
					t.Fatal(err)
				}
				if got, want := planJSON(streamed), planJSON(plan); got != want {
					t.Errorf("spill %v: the streamed plan differs:\n got %s\nwant %s", spill, got, want)
				}
				if settled != len(streamed.Entries) {
					t.Errorf("spill %v: %d entries settled, the plan has %d", spill, settled, len(streamed.Entries))
				}
			}
		})
	}
}
