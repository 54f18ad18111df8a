package translate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/configtest"
	"github.com/topolayer/topolayer/internal/golden"
	"github.com/topolayer/topolayer/internal/translate/declare"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// TestDeclarations: what a plan refuses for want of a declaration gets the configuration
// snippet that places it (a golden file per case: snippet, notes and what cannot be placed);
// the snippet decodes strictly as the configuration's types, and the plan made again with it
// merged into the configuration refuses nothing but what was said to be unplaceable.
func TestDeclarations(t *testing.T) {
	const (
		operator = "cluster-authentication-operator"
		ns       = "openshift-authentication"
		hosted   = "topology:\n  type: Hosted\n  hosted: {namespace: clusters-example, hostedControlPlane: example}\n"
	)
	object := func(class contract.Class, action contract.Action, group, resource, kind, namespace, name string) contract.Mutation {
		apiVersion, meta := "v1", "name: "+name
		if group != "" {
			apiVersion = group + "/v1"
		}
		if namespace != "" {
			meta += ", namespace: " + namespace
		}
		m := contract.Mutation{Class: class, Body: []byte("apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata: {" + meta + "}\n")}
		m.Metadata.Action = action
		m.Metadata.SetIdentity(contract.Identity{Group: group, Version: "v1", Resource: resource, Namespace: namespace, Name: name})
		return m
	}
	secret := func(class contract.Class, name string) contract.Mutation {
		return object(class, contract.ActionApply, "", "secrets", "Secret", ns, name)
	}
	crd := func(class contract.Class) contract.Mutation {
		return object(class, contract.ActionApply, "apiextensions.k8s.io", "customresourcedefinitions", "CustomResourceDefinition", "", "rolebindingrestrictions.authorization.openshift.io")
	}
	event := func(class contract.Class) contract.Mutation {
		m := object(class, contract.ActionCreate, "", "events", "Event", ns, "")
		m.Metadata.SetIdentity(contract.Identity{Version: "v1", Resource: "events", Namespace: ns, GenerateName: "authentication-operator."})
		m.Body = []byte("apiVersion: v1\nkind: Event\nmetadata: {generateName: authentication-operator., namespace: " + ns + "}\n")
		return m
	}
	generated := object(contract.ClassUnspecified, contract.ActionCreate, "", "configmaps", "ConfigMap", ns, "")
	generated.Metadata.SetIdentity(contract.Identity{Version: "v1", Resource: "configmaps", Namespace: ns, GenerateName: "audit-"})
	generated.Body = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: audit-, namespace: " + ns + "}\n")
	declared := func(ids ...contract.Identity) *contract.OutputResources {
		o := &contract.OutputResources{}
		for _, id := range ids {
			o.ManagementResources.ExactResources = append(o.ManagementResources.ExactResources, contract.ExactResourceID{
				ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: id.Group, Version: id.Version, Resource: id.Resource}, Namespace: id.Namespace, Name: id.Name})
		}
		return o
	}
	session := secret(contract.ClassManagement, "v4-0-config-system-session")
	managementCRD := crd(contract.ClassManagement)
	withCRD := declared(session.Identity())
	withCRD.UserWorkloadResources.ExactResources = []contract.ExactResourceID{{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, Name: "rolebindingrestrictions.authorization.openshift.io"}}

	tests := []struct {
		name      string
		config    string // after apiVersion and kind
		policy    string // more fields of the operator's policy entry
		declared  *contract.OutputResources
		mutations []contract.Mutation
	}{
		{name: "nothing-refused", config: hosted, declared: declared(session.Identity()), mutations: []contract.Mutation{session}},
		{name: "hosted-unspecified-idp-family", config: hosted, declared: declared(session.Identity()), mutations: []contract.Mutation{
			session,
			secret(contract.ClassUnspecified, "v4-0-config-user-idp-0-file-data"),
			secret(contract.ClassUnspecified, "v4-0-config-user-idp-1-file-data"),
			secret(contract.ClassUnspecified, "v4-0-config-user-idp-2-file-data"),
			secret(contract.ClassUnspecified, "v4-0-config-system-custom-router-certs"),
		}},
		{name: "hosted-crd-not-listed", config: hosted, declared: withCRD, mutations: []contract.Mutation{session, crd(contract.ClassUserWorkload)}},
		{name: "hosted-crd-unspecified", config: hosted, declared: declared(session.Identity()), mutations: []contract.Mutation{session, crd(contract.ClassUnspecified)}},
		{name: "hosted-crd-on-the-management-cluster", config: hosted, policy: ", management: {kinds: [{group: apiextensions.k8s.io, resource: customresourcedefinitions}]}",
			declared: declared(session.Identity(), managementCRD.Identity()), mutations: []contract.Mutation{session, managementCRD}},
		{name: "hosted-not-on-the-allow-list", config: hosted, declared: declared(session.Identity()), mutations: []contract.Mutation{
			session, object(contract.ClassManagement, contract.ActionApply, "", "endpoints", "Endpoints", ns, "oauth-openshift")}},
		{name: "standalone-events-and-generated-names", config: "topology: {type: Standalone}\n", declared: declared(session.Identity()), mutations: []contract.Mutation{
			session, event(contract.ClassUnspecified), event(contract.ClassUnspecified), generated, // two events: one namespace declared
			secret(contract.ClassManagement, "v4-0-config-system-router-certs"), // in its class, undeclared
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\n" + tc.config +
				"operators:\n- {name: " + operator + ", command: [/bin/true]}\npolicy:\n  operators:\n  - {name: " + operator + tc.policy + "}\n"
			cfg, err := config.Parse([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			engine, err := topology.Engine(cfg, operator, tc.declared)
			if err != nil {
				t.Fatal(err)
			}
			out := &contract.OutputDir{Mutations: tc.mutations}
			plan := engine.Plan(out)
			var d *declare.Declarations = engine.Declarations(plan)
			got, err := yaml.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			golden.File(t, filepath.Join("testdata", "declarations", tc.name+".yaml"), got, "go test ./internal/translate -update")

			snippet, err := d.YAML()
			if err != nil {
				t.Fatal(err)
			}
			if snippet == nil {
				return
			}
			fragment, err := config.Decode(snippet)
			if err != nil {
				t.Fatalf("the snippet does not decode as a configuration: %v\n%s", err, snippet)
			}
			if strings.TrimSpace(string(fragment.APIVersion)) != "" {
				t.Errorf("the snippet sets apiVersion %q: it is a part of a configuration", fragment.APIVersion)
			}
			merged := configtest.MergeFragment(t, cfg, fragment)
			if errs := config.Validate(merged); len(errs) > 0 {
				t.Fatalf("the configuration with the snippet merged is invalid: %v\n%s", errs.ToAggregate(), snippet)
			}
			engine, err = topology.Engine(merged, operator, tc.declared)
			if err != nil {
				t.Fatal(err)
			}
			unplaceable := map[int]bool{}
			for _, u := range d.Unplaceable {
				unplaceable[u.Entry] = true
			}
			for i, e := range engine.Plan(out).Entries {
				if e.Class == contract.ClassUnspecified || e.Disposition == routing.Rejected && !unplaceable[i] {
					t.Errorf("with the snippet merged, #%d %s is %s (%s) in class %s: %s", i, e.Source, e.Disposition, e.Rule, e.Class, e.Reason)
				}
			}
		})
	}
}

// TestNameFamilies: names that differ only by one all-digit segment fold into a name
// pattern, each name into one family; others stay as they are.
func TestNameFamilies(t *testing.T) {
	tests := map[string]struct {
		names []string
		want  []declare.NameFamily
	}{
		"one name stays":          {names: []string{"v4-0-config-user-idp-0-file-data"}, want: []declare.NameFamily{{Name: "v4-0-config-user-idp-0-file-data", Members: []string{"v4-0-config-user-idp-0-file-data"}}}},
		"an index family folds":   {names: []string{"v4-0-config-user-idp-1-file-data", "v4-0-config-user-idp-0-file-data", "v4-0-config-user-idp-0-file-data"}, want: []declare.NameFamily{{Name: "v4-0-config-user-idp-*-file-data", Members: []string{"v4-0-config-user-idp-0-file-data", "v4-0-config-user-idp-1-file-data"}}}},
		"not only by an index":    {names: []string{"idp-a-file-data", "idp-b-file-data"}, want: []declare.NameFamily{{Name: "idp-a-file-data", Members: []string{"idp-a-file-data"}}, {Name: "idp-b-file-data", Members: []string{"idp-b-file-data"}}}},
		"dots separate segments":  {names: []string{"a.0.b", "a.1.b", "c"}, want: []declare.NameFamily{{Name: "a.*.b", Members: []string{"a.0.b", "a.1.b"}}, {Name: "c", Members: []string{"c"}}}},
		"the largest family wins": {names: []string{"x-0-y-0", "x-0-y-1", "x-0-y-2", "x-1-y-0"}, want: []declare.NameFamily{{Name: "x-0-y-*", Members: []string{"x-0-y-0", "x-0-y-1", "x-0-y-2"}}, {Name: "x-1-y-0", Members: []string{"x-1-y-0"}}}},
		"two families":            {names: []string{"a-0-cert", "a-1-cert", "a-0-key", "a-1-key"}, want: []declare.NameFamily{{Name: "a-*-cert", Members: []string{"a-0-cert", "a-1-cert"}}, {Name: "a-*-key", Members: []string{"a-0-key", "a-1-key"}}}},
		"none":                    {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := declare.NameFamilies(tc.names)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NameFamilies(%q) (-want +got):\n%s", tc.names, diff)
			}
			for _, f := range got {
				for _, m := range f.Members {
					if !contract.MatchName(f.Name, m) {
						t.Errorf("%s does not match its member %s", f.Name, m)
					}
				}
			}
		})
	}
}
