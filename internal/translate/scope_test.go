package translate_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

const scopeHCP = "clusters-example"

func scopeEngine() translate.Engine {
	e := hostedEngine(scopeHCP)
	e.HCPNamespace = scopeHCP
	return e
}

// scopeMutation is a Management apply of body, whose identity it reads from body.
func scopeMutation(t *testing.T, group, resource, body string) contract.Mutation {
	t.Helper()
	var u unstructured.Unstructured
	if err := sigsyaml.Unmarshal([]byte(body), &u.Object); err != nil {
		t.Fatal(err)
	}
	m := contract.Mutation{Class: contract.ClassManagement, Body: []byte(body)}
	m.Metadata.Action = contract.ActionApply
	m.Metadata.SetIdentity(contract.Identity{Group: group, Version: "v1", Resource: resource, Namespace: u.GetNamespace(), Name: u.GetName()})
	return m
}

// namespaceObjects are the objects of one simulated namespace whose selectors all say app: x.
func namespaceObjects(t *testing.T, ns string) []contract.Mutation {
	meta := "metadata: {name: x, namespace: " + ns + "}\n"
	return []contract.Mutation{
		deploymentMutation(ns, "x", "x", `      containers: [{name: x, image: x}]
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: x}}}]
`),
		scopeMutation(t, "", "services", "apiVersion: v1\nkind: Service\n"+meta+"spec: {selector: {app: x}, ports: [{port: 80}]}\n"),
		scopeMutation(t, "policy", "poddisruptionbudgets", "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"+meta+"spec: {maxUnavailable: 1, selector: {matchLabels: {app: x}}}\n"),
		scopeMutation(t, "networking.k8s.io", "networkpolicies", "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: deny, namespace: "+ns+"}\nspec: {podSelector: {}, policyTypes: [Ingress, Egress]}\n"),
		scopeMutation(t, "networking.k8s.io", "networkpolicies", "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"+meta+
			"spec:\n  podSelector: {matchLabels: {app: x}}\n  ingress: [{from: [{podSelector: {matchLabels: {app: x}}}]}]\n"),
	}
}

// TestScopeTwoNamespaces: two simulated namespaces whose objects all select app: x, and a pod
// of the hosted control plane labelled app: x too. No selector crosses.
func TestScopeTwoNamespaces(t *testing.T) {
	out := &contract.OutputDir{Mutations: append(namespaceObjects(t, "ns-a"), namespaceObjects(t, "ns-b")...)}
	plan := scopeEngine().Plan(out)
	if plan.Summary.Rejected != 0 {
		t.Fatalf("rejected: %+v", plan.Rejected())
	}
	hcpPod := map[string]string{"app": "x", hosted.LabelHostedControlPlane: scopeHCP}
	if v := scope.Check(plan, scopeHCP, nil, hcpPod); len(v) != 0 {
		t.Fatalf("violations: %+v", v)
	}
	for _, e := range plan.Entries {
		if len(e.Warnings) > 0 {
			t.Errorf("%s: warnings %v", e.Source, e.Warnings)
		}
		scoped := false
		for _, c := range e.Changes {
			scoped = scoped || c.By == scope.Rule
		}
		if !scoped {
			t.Errorf("%s: no change by %s", e.Source, scope.Rule)
		}
	}

	// The check catches a selector that crosses: drop the namespace from one Service.
	for i, e := range plan.Entries {
		if e.Source.Resource == "services" && e.Source.Namespace == "ns-a" {
			unstructured.RemoveNestedField(plan.Entries[i].Object.Object, "spec", "selector", namespaces.LabelNamespace)
		}
	}
	v := scope.Check(plan, scopeHCP, nil, hcpPod)
	var msgs []string
	for _, x := range v {
		msgs = append(msgs, x.Message)
	}
	joined := strings.Join(msgs, "\n")
	for _, want := range []string{"does not keep to simulated namespace ns-a", "selects the pods of deployments.apps ns-b/x", "selects a pod outside the plan"} {
		if !strings.Contains(joined, want) {
			t.Errorf("violations %q do not say %q", joined, want)
		}
	}

	// And one that requires the other namespace's label: it selects that namespace's pods
	// (the check looks them up by the label's value) and no pod outside the plan.
	for i, e := range plan.Entries {
		if e.Source.Resource == "services" && e.Source.Namespace == "ns-a" {
			if err := unstructured.SetNestedField(plan.Entries[i].Object.Object, "ns-b", "spec", "selector", namespaces.LabelNamespace); err != nil {
				t.Fatal(err)
			}
		}
	}
	msgs = nil
	for _, x := range scope.Check(plan, scopeHCP, nil, hcpPod) {
		msgs = append(msgs, x.Message)
	}
	joined = strings.Join(msgs, "\n")
	for _, want := range []string{"does not keep to simulated namespace ns-a", "selects the pods of deployments.apps ns-b/x"} {
		if !strings.Contains(joined, want) {
			t.Errorf("violations %q do not say %q", joined, want)
		}
	}
	if strings.Contains(joined, "selects a pod outside the plan") {
		t.Errorf("violations %q: a selector that requires ns-b selects the control plane's pod", joined)
	}
}

// TestScopeSelectors checks the scoped form of each kind of selector.
func TestScopeSelectors(t *testing.T) {
	cases := map[string]struct {
		group, resource, body string
		field                 []string // the field compared
		want                  string   // its scoped form, YAML
		warn                  string   // a warning the entry must have
	}{
		"service": {
			group: "", resource: "services",
			body:  "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\nspec: {selector: {app: x}}\n",
			field: []string{"spec", "selector"}, want: "{app: x, topolayer.dev/namespace: a}",
		},
		"service without selector is left": {
			group: "", resource: "services",
			body:  "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\nspec: {ports: [{port: 1}]}\n",
			field: []string{"spec", "selector"}, want: "null",
		},
		"statefulset selector and template": {
			group: "apps", resource: "statefulsets",
			body:  "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, namespace: a}\nspec: {selector: {matchExpressions: [{key: app, operator: In, values: [x]}]}, template: {metadata: {labels: {app: x}}}}\n",
			field: []string{"spec"},
			want: "{selector: {matchExpressions: [{key: app, operator: In, values: [x]}], matchLabels: {topolayer.dev/namespace: a}}," +
				" template: {metadata: {labels: {app: x, topolayer.dev/namespace: a, topolayer.dev/operator: op}}}}",
		},
		"pdb": {
			group: "policy", resource: "poddisruptionbudgets",
			body:  "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: s, namespace: a}\nspec: {selector: {}}\n",
			field: []string{"spec", "selector"}, want: "{matchLabels: {topolayer.dev/namespace: a}}",
		},
		"a label value YAML 1.1 reads as a boolean": {
			group: "networking.k8s.io", resource: "networkpolicies",
			body:  "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: s, namespace: a}\nspec: {podSelector: {matchLabels: {app: 'on'}}}\n",
			field: []string{"spec", "podSelector"}, want: "{matchLabels: {app: 'on', topolayer.dev/namespace: a}}",
		},
		"a NetworkPolicy written in the HCP namespace itself opens only the operator's pods there": {
			group: "networking.k8s.io", resource: "networkpolicies",
			body:  "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: s, namespace: " + scopeHCP + "}\nspec: {podSelector: {}, ingress: [{}]}\n",
			field: []string{"spec", "podSelector"}, want: "{matchLabels: {topolayer.dev/namespace: " + scopeHCP + "}}",
		},
		"a NodePort Service in the HCP namespace selecting app: etcd selects only its namespace's": {
			group: "", resource: "services",
			body:  "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: " + scopeHCP + "}\nspec: {selector: {app: etcd}}\n",
			field: []string{"spec", "selector"}, want: "{app: etcd, topolayer.dev/namespace: " + scopeHCP + "}",
		},
		"networkpolicy deny-all": {
			group: "networking.k8s.io", resource: "networkpolicies",
			body:  "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: s, namespace: a}\nspec: {podSelector: {}}\n",
			field: []string{"spec", "podSelector"}, want: "{matchLabels: {topolayer.dev/namespace: a}}",
		},
		"networkpolicy peer in a simulated namespace": {
			group: "networking.k8s.io", resource: "networkpolicies",
			body: "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: s, namespace: a}\nspec:\n  podSelector: {}\n" +
				"  ingress: [{from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: a}}}, {podSelector: {matchLabels: {app: 'y'}}}, {ipBlock: {cidr: 10.0.0.0/8}}]}]\n",
			field: []string{"spec", "ingress"},
			want: "[{from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: clusters-example}}, podSelector: {matchLabels: {topolayer.dev/namespace: a}}}," +
				" {podSelector: {matchLabels: {app: 'y', topolayer.dev/namespace: a}}}, {ipBlock: {cidr: 10.0.0.0/8}}]}]",
		},
		"networkpolicy peer in another namespace warns": {
			group: "networking.k8s.io", resource: "networkpolicies",
			body: "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: s, namespace: a}\nspec:\n  podSelector: {}\n" +
				"  egress: [{to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: openshift-dns}}, podSelector: {matchLabels: {app: dns}}}]}]\n",
			field: []string{"spec", "egress"},
			want:  "[{to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: openshift-dns}}, podSelector: {matchLabels: {app: dns}}}]}]",
			warn:  "reaches namespace openshift-dns",
		},
		"affinity and spread": {
			group: "", resource: "pods",
			body: "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec:\n  affinity:\n    podAntiAffinity:\n" +
				"      requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: h, labelSelector: {matchLabels: {app: x}}}, {topologyKey: h, namespaces: [a], labelSelector: {}}]\n" +
				"      preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: h}}]\n" +
				"  topologySpreadConstraints: [{labelSelector: {matchLabels: {app: x}}}]\n",
			field: []string{"spec"},
			want: "{affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [" +
				"{topologyKey: h, labelSelector: {matchLabels: {app: x, topolayer.dev/namespace: a}}}, " +
				"{topologyKey: h, namespaces: [clusters-example], labelSelector: {matchLabels: {topolayer.dev/namespace: a}}}], " +
				"preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: h}}]}}, " +
				"topologySpreadConstraints: [{labelSelector: {matchLabels: {app: x, topolayer.dev/namespace: a}}}]}",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m := scopeMutation(t, c.group, c.resource, c.body)
			// a makes a a simulated namespace of the plan
			cm := scopeMutation(t, "", "configmaps", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n")
			plan := scopeEngine().Plan(&contract.OutputDir{Mutations: []contract.Mutation{m, cm}})
			e := plan.Entries[0]
			if e.Object == nil {
				t.Fatalf("no object: %+v", e)
			}
			got, _, _ := unstructured.NestedFieldNoCopy(e.Object.Object, c.field...)
			var want any
			if err := sigsyaml.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := sigsyaml.Marshal(got)
			var gotAny any
			_ = sigsyaml.Unmarshal(gotJSON, &gotAny)
			if diff := cmp.Diff(want, gotAny); diff != "" {
				t.Errorf("%v (-want +got):\n%s", c.field, diff)
			}
			if c.warn != "" && !strings.Contains(strings.Join(e.Warnings, "\n"), c.warn) {
				t.Errorf("warnings %v do not say %q", e.Warnings, c.warn)
			}
			if v := scope.Check(plan, scopeHCP, nil); len(v) != 0 {
				t.Errorf("violations: %+v", v)
			}
			if w := strings.Join(e.Warnings, "\n"); c.warn == "" && strings.Contains(w, scope.RuleCheck) {
				t.Errorf("warnings of the scope check: %s", w)
			}
			// The inverse mapping gives the operator its own object back.
			obj, err := kyaml.Parse(string(contracttest.Bytes(t, e.Mutation)))
			if err != nil {
				t.Fatal(err)
			}
			inv := translate.Inverse{Names: namespaces.Hosted{Namespace: scopeHCP}}
			back, _, _, err := inv.Object(e.Target.Cluster, e.Target.Identity, obj)
			if err != nil {
				t.Fatal(err)
			}
			var orig, got2 any
			_ = sigsyaml.Unmarshal([]byte(c.body), &orig)
			_ = sigsyaml.Unmarshal([]byte(back.MustString()), &got2)
			if diff := cmp.Diff(orig, got2); diff != "" {
				t.Errorf("mapped back (-original +got):\n%s", diff)
			}
		})
	}
}

// TestEveryNamespaceConfigMaps: a projected kube-root-ca.crt keeps its name in the HCP
// namespace; a ConfigMap of the plan is renamed.
func TestEveryNamespaceConfigMaps(t *testing.T) {
	d := deploymentMutation("a", "d", "d", `      containers: [{name: d, image: d}]
      volumes:
      - name: token
        projected: {sources: [{configMap: {name: kube-root-ca.crt}}, {configMap: {name: openshift-service-ca.crt}}]}
      - {name: own, configMap: {name: own}}
`)
	cm := scopeMutation(t, "", "configmaps", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own, namespace: a}\n")
	plan := scopeEngine().Plan(&contract.OutputDir{Mutations: []contract.Mutation{d, cm}})
	vols, _, _ := unstructured.NestedSlice(plan.Entries[0].Object.Object, "spec", "template", "spec", "volumes")
	var names []string
	for _, v := range vols {
		m := v.(map[string]any)
		if p, ok := m["projected"].(map[string]any); ok {
			for _, s := range p["sources"].([]any) {
				names = append(names, s.(map[string]any)["configMap"].(map[string]any)["name"].(string))
			}
		} else {
			names = append(names, m["configMap"].(map[string]any)["name"].(string))
		}
	}
	if want := []string{"kube-root-ca.crt", "openshift-service-ca.crt", "a--own"}; !cmp.Equal(names, want) {
		t.Errorf("configMap names %v, want %v", names, want)
	}
	if w := plan.Entries[0].Warnings; len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
}

// TestOutsideTableReferences: the serving-cert annotation and a Service URL in a ConfigMap
// follow the renamed objects, and the changes are recorded.
func TestOutsideTableReferences(t *testing.T) {
	svc := scopeMutation(t, "", "services", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: a, annotations: {service.beta.openshift.io/serving-cert-secret-name: cert}}\nspec: {selector: {app: web}}\n")
	cm := scopeMutation(t, "", "configmaps", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\ndata: {url: 'https://web.a.svc:443/x and http://web.a.svc.cluster.local and kubernetes.default.svc and web.a.svc.example.com'}\n")
	token := scopeMutation(t, "", "secrets", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/service-account-token\nmetadata: {name: t, namespace: a, annotations: {kubernetes.io/service-account.name: sa}}\n")
	sa := scopeMutation(t, "", "serviceaccounts", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa, namespace: a}\n")
	plan := scopeEngine().Plan(&contract.OutputDir{Mutations: []contract.Mutation{svc, cm, token, sa}})
	if got := plan.Entries[0].Object.GetAnnotations()["service.beta.openshift.io/serving-cert-secret-name"]; got != "a--cert" {
		t.Errorf("serving-cert annotation %q, want a--cert", got)
	}
	if got := plan.Entries[2].Object.GetAnnotations()["kubernetes.io/service-account.name"]; got != "a--sa" {
		t.Errorf("service-account.name annotation %q, want a--sa", got)
	}
	if v := scope.Check(plan, scopeHCP, nil); len(v) != 0 {
		t.Errorf("violations: %+v", v)
	}
	data, _, _ := unstructured.NestedString(plan.Entries[1].Object.Object, "data", "url")
	if want := "https://a--web.clusters-example.svc:443/x and http://a--web.clusters-example.svc.cluster.local and kubernetes.default.svc and web.a.svc.example.com"; data != want {
		t.Errorf("data %q, want %q", data, want)
	}
	by := map[string]bool{}
	for _, e := range plan.Entries {
		for _, c := range e.Changes {
			by[c.By] = true
		}
	}
	if !by[translate.ByAnnotationReferences] || !by[translate.ByPayloadServiceDNS] {
		t.Errorf("changes not recorded: %v", by)
	}
	inv := translate.Inverse{Names: namespaces.Hosted{Namespace: scopeHCP}}
	for i, m := range []contract.Mutation{svc, cm, token} {
		e := plan.Entries[i]
		obj, err := kyaml.Parse(string(contracttest.Bytes(t, e.Mutation)))
		if err != nil {
			t.Fatal(err)
		}
		back, _, _, err := inv.Object(e.Target.Cluster, e.Target.Identity, obj)
		if err != nil {
			t.Fatal(err)
		}
		var orig, got any
		_ = sigsyaml.Unmarshal(m.Body, &orig)
		_ = sigsyaml.Unmarshal([]byte(back.MustString()), &got)
		if diff := cmp.Diff(orig, got); diff != "" {
			t.Errorf("%s mapped back (-original +got):\n%s", e.Source, diff)
		}
	}
}

// TestServingCertAlias: with the serving secret aliased to the HCP's own oauth-server-crt,
// the Service's serving-cert annotation names the alias.
func TestServingCertAlias(t *testing.T) {
	e := scopeEngine()
	e.Names = namespaces.Hosted{Namespace: scopeHCP, Aliases: []namespaces.Alias{{
		Source: contract.Identity{Version: "v1", Resource: "secrets", Namespace: "openshift-authentication", Name: "v4-0-config-system-serving-cert"},
		Name:   "oauth-server-crt",
	}}}
	svc := scopeMutation(t, "", "services", "apiVersion: v1\nkind: Service\nmetadata: {name: oauth-openshift, namespace: openshift-authentication, annotations: {service.alpha.openshift.io/serving-cert-secret-name: v4-0-config-system-serving-cert}}\nspec: {selector: {app: oauth-openshift}}\n")
	plan := e.Plan(&contract.OutputDir{Mutations: []contract.Mutation{svc}})
	if got := plan.Entries[0].Object.GetAnnotations()["service.alpha.openshift.io/serving-cert-secret-name"]; got != "oauth-server-crt" {
		t.Errorf("serving-cert annotation %q, want the alias oauth-server-crt (warnings %v)", got, plan.Entries[0].Warnings)
	}
}

// TestScopePreferredPodAffinity: a preferred pod affinity term that stays in the pod's own
// namespace (the HCP namespace) only draws the pod to the nodes of its own hosted control
// plane's pods, as HyperShift's colocation does, and passes the check; the same term naming
// namespaces is checked like any other selector.
func TestScopePreferredPodAffinity(t *testing.T) {
	cases := map[string]struct {
		term string
		want string // a violation must say it; "" for none
	}{
		"own namespace, the whole control plane":     {term: `{labelSelector: {matchLabels: {app: x}}, topologyKey: h}`},
		"empty namespaces list is the own namespace": {term: `{labelSelector: {matchLabels: {app: x}}, namespaces: [], topologyKey: h}`},
		"named namespaces":                           {term: `{labelSelector: {matchLabels: {app: x}}, namespaces: [` + scopeHCP + `], topologyKey: h}`, want: "selects a pod outside the plan"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			out := &contract.OutputDir{Mutations: append(namespaceObjects(t, "ns-a"), namespaceObjects(t, "ns-b")...)}
			plan := scopeEngine().Plan(out)
			var term map[string]any
			if err := sigsyaml.Unmarshal([]byte(c.term), &term); err != nil {
				t.Fatal(err)
			}
			added := false
			for i, e := range plan.Entries {
				if e.Source.Resource == "deployments" && e.Source.Namespace == "ns-a" {
					preferred := []any{map[string]any{"weight": int64(100), "podAffinityTerm": term}}
					if err := unstructured.SetNestedSlice(plan.Entries[i].Object.Object, preferred, "spec", "template", "spec", "affinity", "podAffinity", "preferredDuringSchedulingIgnoredDuringExecution"); err != nil {
						t.Fatal(err)
					}
					added = true
				}
			}
			if !added {
				t.Fatal("no Deployment in ns-a")
			}
			hcpPod := map[string]string{"app": "x", hosted.LabelHostedControlPlane: scopeHCP}
			var msgs []string
			for _, v := range scope.Check(plan, scopeHCP, nil, hcpPod) {
				msgs = append(msgs, v.Message)
			}
			joined := strings.Join(msgs, "\n")
			switch {
			case c.want == "" && joined != "":
				t.Errorf("violations: %s", joined)
			case c.want != "" && !strings.Contains(joined, c.want):
				t.Errorf("violations %q do not say %q", joined, c.want)
			}
		})
	}
}

// TestScopeCheckFacts: the planner's scope check reads each final object's facts from the
// engine's own tree (scope.ReadFacts) instead of building the tree again; its warnings are
// those scope.Check finds on the finished plan, for selectors, table references, annotations
// of the table, and Service DNS names, each undone here by a configured patch.
func TestScopeCheckFacts(t *testing.T) {
	patch := func(name, group, resource, ops string) transform.Transform {
		tr, err := transform.Patch{Name: name, Cluster: routing.ClusterManagement, Match: routing.Match{Group: &group, Resource: resource, Namespace: "demo"}, JSON6902: ops}.Transform()
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	e := hostedEngine(scopeHCP,
		patch("standalone-volume", "apps", "deployments", `[{"op": "replace", "path": "/spec/template/spec/volumes/0/configMap/name", "value": "settings"}]`),
		patch("unscoped-service", "", "services", `[{"op": "replace", "path": "/spec/selector", "value": {"app": "web"}}]`),
		patch("standalone-url", "", "configmaps", `[{"op": "add", "path": "/data/url", "value": "https://web.demo.svc:8443"}]`),
	)
	e.HCPNamespace = scopeHCP
	newOut := func() *contract.OutputDir {
		return &contract.OutputDir{Mutations: []contract.Mutation{
			scopeMutation(t, "", "configmaps", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: demo}\ndata: {k: v}\n"),
			deploymentMutation("demo", "web", "web", "      volumes: [{name: c, configMap: {name: settings}}]\n      containers: [{name: web, image: web}]\n"),
			scopeMutation(t, "", "services", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: demo}\nspec: {selector: {app: web}, ports: [{port: 8443}]}\n"),
			deploymentMutation("elsewhere", "other", "web", "      containers: [{name: web, image: web}]\n"),
		}}
	}
	plan := e.Plan(newOut())
	var warned, checked []string
	for _, en := range plan.Entries {
		for _, w := range en.Warnings {
			if msg, ok := strings.CutPrefix(w, scope.RuleCheck+": "); ok {
				warned = append(warned, en.Source.String()+": "+msg)
			}
		}
	}
	for _, v := range scope.Check(plan, scopeHCP, nil) {
		checked = append(checked, plan.Entries[v.Entry].Source.String()+": "+v.Message)
	}
	slices.Sort(warned)
	slices.Sort(checked)
	if diff := cmp.Diff(checked, warned); diff != "" {
		t.Errorf("the planner's warnings (+) are not scope.Check's on the finished plan (-):\n%s", diff)
	}
	// A streaming planner settles the entries that nothing but the scope check reads as it
	// finishes them, drops their objects and, with a spill, spills them: the check reads
	// their facts, and warns the same, in plan.json too.
	var wantJSON bytes.Buffer
	if err := plans.WriteJSON(&wantJSON, plan); err != nil {
		t.Fatal(err)
	}
	for _, spill := range []bool{false, true} {
		streaming := func() *translate.Planner {
			p := e.Planner(func(*plans.Entry) error { return nil })
			if spill {
				f, err := os.CreateTemp(t.TempDir(), "spill")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				p.SpillTo(f)
			}
			for _, m := range newOut().Mutations {
				p.Add(&m)
			}
			return p
		}
		streamed := streaming().Plan()
		if len(streamed.Entries) != len(plan.Entries) {
			t.Fatalf("spill %v: the streaming planner's plan has %d entries, Engine.Plan's %d", spill, len(streamed.Entries), len(plan.Entries))
		}
		for i, en := range streamed.Entries {
			if diff := cmp.Diff(plan.Entries[i].Warnings, en.Warnings); diff != "" {
				t.Errorf("spill %v: %s: the streaming planner's warnings (+) are not Engine.Plan's (-):\n%s", spill, en.Source, diff)
			}
		}
		var gotJSON bytes.Buffer
		if _, err := streaming().WritePlan(&gotJSON); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantJSON.String(), gotJSON.String()); diff != "" {
			t.Errorf("spill %v: the streaming planner's plan.json (+) is not Engine.Plan's (-):\n%s", spill, diff)
		}
	}
	for _, want := range []string{
		"names a standalone identity the plan renamed: spec.template.spec.volumes[0].configMap.name: ConfigMap " + scopeHCP + "/settings",
		"spec.selector: does not keep to simulated namespace demo",
		"spec.selector: selects the pods of deployments.apps elsewhere/other from simulated namespace elsewhere",
		"names Service demo/web by its standalone DNS name",
	} {
		if !slices.ContainsFunc(warned, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("no warning %q among:\n%s", want, strings.Join(warned, "\n"))
		}
	}
}
