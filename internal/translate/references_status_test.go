package translate_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/namespaces"
)

// TestStatusReferences: a ClusterOperator's relatedObjects and an operator CR's generations
// name the hosted identities of the objects the plan places on the management cluster (the
// shadow CR, the renamed Deployment, a declared Deployment of another run), keep Namespaces
// and objects of the guest as they are, record each change, pass the plan-level check, and
// map back to what the operator wrote.
func TestStatusReferences(t *testing.T) {
	declared, err := contract.ParseOutputResources([]byte(`managementResources:
  exactResources:
  - {group: operator.openshift.io, version: v1, resource: authentications, name: cluster}
  - {group: config.openshift.io, version: v1, resource: clusteroperators, name: authentication}
  - {group: apps, version: v1, resource: deployments, namespace: openshift-authentication, name: oauth-openshift}
  - {group: apps, version: v1, resource: deployments, namespace: openshift-oauth-apiserver, name: apiserver}
userWorkloadResources:
  exactResources:
  - {group: "", version: v1, resource: services, namespace: openshift-oauth-apiserver, name: api}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := scopeEngine()
	e.Declared = declared
	co := scopeMutation(t, "config.openshift.io", "clusteroperators", `apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata: {name: authentication}
status:
  relatedObjects:
  - {group: operator.openshift.io, resource: authentications, name: cluster}
  - {group: config.openshift.io, resource: oauths, name: cluster}
  - {group: "", resource: namespaces, name: openshift-authentication}
  - {group: apps, resource: deployments, namespace: openshift-oauth-apiserver, name: apiserver}
  - {group: "", resource: services, namespace: openshift-oauth-apiserver, name: api}
`)
	co.Metadata.Action = contract.ActionUpdateStatus
	cr := scopeMutation(t, "operator.openshift.io", "authentications", `apiVersion: operator.openshift.io/v1
kind: Authentication
metadata: {name: cluster}
status:
  generations:
  - {group: apps, resource: deployments, namespace: openshift-authentication, name: oauth-openshift, lastGeneration: 3}
`)
	cr.Metadata.Action = contract.ActionApplyStatus
	d := scopeMutation(t, "apps", "deployments", `apiVersion: apps/v1
kind: Deployment
metadata: {name: oauth-openshift, namespace: openshift-authentication}
spec:
  selector: {matchLabels: {app: oauth-openshift}}
  template: {metadata: {labels: {app: oauth-openshift}}, spec: {containers: [{name: c, image: c}]}}
`)
	svc := scopeMutation(t, "", "services", "apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: openshift-oauth-apiserver}\nspec: {ports: [{port: 443}]}\n")
	svc.Class = contract.ClassUserWorkload
	plan := e.Plan(&contract.OutputDir{Mutations: []contract.Mutation{co, cr, d, svc}})
	if len(plan.Rejected()) > 0 {
		t.Fatalf("rejected: %+v", plan.Rejected())
	}
	shadow := namespaces.ShadowGroup("operator.openshift.io")
	want := map[int]map[string]any{
		0: {"relatedObjects": []any{
			map[string]any{"group": shadow, "resource": "authentications", "namespace": scopeHCP, "name": "cluster"},
			map[string]any{"group": "config.openshift.io", "resource": "oauths", "name": "cluster"},
			map[string]any{"group": "", "resource": "namespaces", "name": "openshift-authentication"},
			map[string]any{"group": "apps", "resource": "deployments", "namespace": scopeHCP, "name": "openshift-oauth-apiserver--apiserver"},
			map[string]any{"group": "", "resource": "services", "namespace": "openshift-oauth-apiserver", "name": "api"},
		}},
		1: {"generations": []any{
			map[string]any{"group": "apps", "resource": "deployments", "namespace": scopeHCP, "name": "openshift-authentication--oauth-openshift", "lastGeneration": int64(3)},
		}},
	}
	for i, w := range want {
		entry := plan.Entries[i]
		got, _, _ := unstructured.NestedMap(entry.Object.Object, "status")
		for k := range got {
			if _, ok := w[k]; !ok {
				delete(got, k)
			}
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s status (-want +got):\n%s", entry.Source, diff)
		}
		changed := 0
		for _, c := range entry.Changes {
			if c.By == translate.ByStatusReferences {
				changed++
			}
		}
		if wantChanged := map[int]int{0: 4, 1: 2}[i]; changed != wantChanged {
			t.Errorf("%s: %d changes by %s, want %d: %+v", entry.Source, changed, translate.ByStatusReferences, wantChanged, entry.Changes)
		}
		if len(entry.Warnings) != 0 {
			t.Errorf("%s: warnings %v", entry.Source, entry.Warnings)
		}

		// The inverse mapping gives the operator its own status back.
		obj, err := kyaml.FromMap(entry.Object.Object)
		if err != nil {
			t.Fatal(err)
		}
		inv := translate.Inverse{Names: namespaces.Hosted{Namespace: scopeHCP}}
		back, _, warnings, err := inv.Object(entry.Target.Cluster, entry.Target.Identity, obj)
		if err != nil || len(warnings) > 0 {
			t.Fatalf("%s: inverse: %v %v", entry.Source, err, warnings)
		}
		var orig, gotBack map[string]any
		_ = sigsyaml.Unmarshal(contracttest.Bytes(t, entry.Mutation), &gotBack)
		_ = sigsyaml.Unmarshal([]byte(back.MustString()), &gotBack)
		_ = sigsyaml.Unmarshal([]byte(map[int]contract.Mutation{0: co, 1: cr}[i].Body), &orig)
		if diff := cmp.Diff(orig["status"], gotBack["status"]); diff != "" {
			t.Errorf("%s status mapped back (-original +got):\n%s", entry.Source, diff)
		}
	}
	if v := scope.Check(plan, scopeHCP, nil); len(v) != 0 {
		t.Errorf("violations: %+v", v)
	}

	// The check catches a status entry left in standalone form.
	unstructured.SetNestedSlice(plan.Entries[1].Object.Object, []any{
		map[string]any{"group": "apps", "resource": "deployments", "namespace": "openshift-authentication", "name": "oauth-openshift"},
	}, "status", "generations")
	var msgs []string
	for _, v := range scope.Check(plan, scopeHCP, nil) {
		msgs = append(msgs, v.Message)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "/status/generations/0 names deployments.apps openshift-authentication/oauth-openshift") {
		t.Errorf("violations %q do not name the stale generation", msgs)
	}
}

// TestStatusReferencesComponentRoutes: the relatedObjects of the cluster Ingress's
// componentRoutes (a list in a list) name the hosted Route; the component route's own
// namespace and name, which match the administrator's spec, stay.
func TestStatusReferencesComponentRoutes(t *testing.T) {
	route := scopeMutation(t, "route.openshift.io", "routes", "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata: {name: oauth-openshift, namespace: openshift-authentication}\nspec: {to: {kind: Service, name: oauth-openshift}}\n")
	ingress := scopeMutation(t, "config.openshift.io", "ingresses", `apiVersion: config.openshift.io/v1
kind: Ingress
metadata: {name: cluster}
status:
  componentRoutes:
  - namespace: openshift-authentication
    name: oauth-openshift
    defaultHostname: oauth-openshift.apps.example.com
    relatedObjects:
    - {group: route.openshift.io, resource: routes, namespace: openshift-authentication, name: oauth-openshift}
  - namespace: openshift-console
    name: console
    relatedObjects:
    - {group: "", resource: secrets, namespace: openshift-config, name: console-cert}
    - {group: route.openshift.io, resource: routes, namespace: openshift-authentication, name: oauth-openshift}
`)
	ingress.Class = contract.ClassConfiguration
	ingress.Metadata.Action = contract.ActionApplyStatus
	plan := scopeEngine().Plan(&contract.OutputDir{Mutations: []contract.Mutation{route, ingress}})
	e := plan.Entries[1]
	if e.Object == nil {
		t.Fatalf("no object: %s %s %s", e.Disposition, e.Rule, e.Reason)
	}
	routes, _, _ := unstructured.NestedSlice(e.Object.Object, "status", "componentRoutes")
	got := routes[0].(map[string]any)
	want := map[string]any{
		"namespace": "openshift-authentication", "name": "oauth-openshift", "defaultHostname": "oauth-openshift.apps.example.com",
		"relatedObjects": []any{map[string]any{"group": "route.openshift.io", "resource": "routes", "namespace": scopeHCP, "name": "openshift-authentication--oauth-openshift"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("componentRoutes[0] (-want +got):\n%s", diff)
	}
	var paths []string
	for _, c := range e.Changes {
		if c.By == translate.ByStatusReferences {
			paths = append(paths, c.Path)
		}
	}
	if want := []string{
		"/status/componentRoutes/0/relatedObjects/0/name", "/status/componentRoutes/0/relatedObjects/0/namespace",
		"/status/componentRoutes/1/relatedObjects/1/name", "/status/componentRoutes/1/relatedObjects/1/namespace",
	}; !cmp.Equal(paths, want) {
		t.Errorf("changes at %v, want %v", paths, want)
	}
	if v := scope.Check(plan, scopeHCP, nil); len(v) != 0 {
		t.Errorf("violations: %+v", v)
	}
	obj, err := kyaml.FromMap(e.Object.Object)
	if err != nil {
		t.Fatal(err)
	}
	back, _, warnings, err := translate.Inverse{Names: namespaces.Hosted{Namespace: scopeHCP}}.Object(e.Target.Cluster, e.Target.Identity, obj)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("inverse: %v %v", err, warnings)
	}
	var orig, gotBack map[string]any
	_ = sigsyaml.Unmarshal(ingress.Body, &orig)
	_ = sigsyaml.Unmarshal([]byte(back.MustString()), &gotBack)
	if diff := cmp.Diff(orig["status"], gotBack["status"]); diff != "" {
		t.Errorf("status mapped back (-original +got):\n%s", diff)
	}
}
