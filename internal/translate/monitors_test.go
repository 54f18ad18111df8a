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
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// TestMonitorsOnManagement: the management cluster's Prometheus scrapes with what a
// ServiceMonitor or PodMonitor names, so one lands only when it scrapes its own namespace
// with the operator's own credentials: its own namespace in namespaceSelector becomes the
// HCP namespace and its Secrets are renamed like every reference; another namespace, a file
// of Prometheus, a proxy, a relabeled address or a Secret of the environment is refused,
// the field named.
func TestMonitorsOnManagement(t *testing.T) {
	const hcp = "clusters-example"
	engine := profileEngine(hcp, &policy.Policy{PodSecurity: policy.PodSecurityStrip})
	engine.Containment, engine.HCPNamespace = hosted.Containment(hcp), hcp // as the hosted topology composes it
	// HyperShift's serving certificate, which the operator reads under its standalone name
	// (namespaces.aliases): read-only, as the topology makes every alias.
	serving := contract.Identity{Resource: "secrets", Namespace: "openshift-authentication-operator", Name: "serving-cert"}
	engine.Names = namespaces.Hosted{Namespace: hcp, Aliases: []namespaces.Alias{{Source: serving, Name: "oauth-server-crt"}}}
	engine.Containment.ReadOnly = []contract.Identity{{Resource: "secrets", Namespace: hcp, Name: "oauth-server-crt"}}
	monitor := func(resource, kind, list, spec string) contract.Mutation {
		return policyMutation(contract.ActionApply, "monitoring.coreos.com", resource, "openshift-authentication-operator", "metrics",
			"apiVersion: monitoring.coreos.com/v1\nkind: "+kind+"\nmetadata: {name: metrics, namespace: openshift-authentication-operator}\n"+
				"spec:\n  selector: {matchLabels: {app: operator}}\n"+spec+"  "+list+":\n  - port: https\n    scheme: https\n")
	}
	sm := func(spec, endpoint string) contract.Mutation {
		m := monitor("servicemonitors", "ServiceMonitor", "endpoints", spec)
		m.Body = append(m.Body, []byte(endpoint)...)
		return m
	}
	pm := func(endpoint string) contract.Mutation {
		m := monitor("podmonitors", "PodMonitor", "podMetricsEndpoints", "")
		m.Body = append(m.Body, []byte(endpoint)...)
		return m
	}
	tests := []struct {
		name string
		m    contract.Mutation
		// refused is part of the reason; "" means it lands.
		refused string
		// want are fields of the landed object (dotted path = value).
		want map[string]string
	}{
		{"its own namespace and Secret: lands, in the HCP namespace, the Secret renamed",
			sm("  namespaceSelector: {matchNames: [openshift-authentication-operator]}\n", "    bearerTokenSecret: {name: metrics-token, key: token}\n"), "",
			map[string]string{"spec.namespaceSelector.matchNames.0": hcp, "spec.endpoints.0.bearerTokenSecret.name": "openshift-authentication-operator--metrics-token"}},
		{"no namespaceSelector, a CA from its own ConfigMap: lands", sm("", "    tlsConfig: {ca: {configMap: {name: ca, key: ca.crt}}}\n"), "",
			map[string]string{"spec.endpoints.0.tlsConfig.ca.configMap.name": "openshift-authentication-operator--ca"}},
		{"the namespace's service CA to verify the target: lands, the name kept (every namespace has one)", sm("", "    tlsConfig: {ca: {configMap: {name: openshift-service-ca.crt, key: service-ca.crt}}}\n"), "",
			map[string]string{"spec.endpoints.0.tlsConfig.ca.configMap.name": "openshift-service-ca.crt"}},
		{"every namespace", sm("  namespaceSelector: {any: true}\n", ""), "spec.namespaceSelector.any", nil},
		{"another namespace", sm("  namespaceSelector: {matchNames: [openshift-etcd]}\n", ""), `spec.namespaceSelector.matchNames[0]: "openshift-etcd"`, nil},
		{"Prometheus's own token", sm("", "    bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n"), "spec.endpoints[0].bearerTokenFile", nil},
		{"Prometheus's client key", pm("    tlsConfig: {keyFile: /etc/prometheus/secrets/metrics-client-certs/tls.key}\n"), "spec.podMetricsEndpoints[0].tlsConfig.keyFile", nil},
		{"HyperShift's serving certificate, through its alias, as the client certificate", sm("", "    tlsConfig: {keySecret: {name: serving-cert, key: tls.key}}\n"),
			`spec.endpoints[0].tlsConfig.keySecret.name: secrets "oauth-server-crt" is the environment's own object`, nil},
		{"a proxy", sm("", "    proxyUrl: http://attacker.example:3128\n"), "spec.endpoints[0].proxyUrl", nil},
		{"a scrape class of Prometheus's, with its client certificate", sm("  scrapeClass: tls-client-cert\n", ""), "spec.scrapeClass", nil},
		{"the scrape pointed at another address", pm("    relabelings: [{targetLabel: __address__, replacement: 'kube-apiserver:6443'}]\n"), "relabelings[0].targetLabel: __address__", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := engine.Plan(&contract.OutputDir{Mutations: []contract.Mutation{tc.m}})
			if len(p.Entries) != 1 {
				t.Fatalf("%d entries", len(p.Entries))
			}
			e := p.Entries[0]
			if tc.refused != "" {
				wantManagementFieldsRefusal(t, e, tc.refused)
				return
			}
			if e.Disposition != routing.Apply || e.Target.Cluster != routing.ClusterManagement {
				t.Fatalf("%s on %s (%s): %s", e.Disposition, e.Target.Cluster, e.Rule, e.Reason)
			}
			for path, want := range tc.want {
				if got := field(e.Object.Object, strings.Split(path, ".")); got != want {
					t.Errorf("%s = %q, want %q", path, got, want)
				}
			}
			// hypershift/monitor-own-targets: its operator's Services or pods alone.
			labels := field(e.Object.Object, []string{"spec", "selector", "matchLabels", "app"}) + "," +
				field(e.Object.Object, []string{"spec", "selector", "matchLabels", namespaces.LabelOperator})
			if labels != "operator,op" {
				t.Errorf("spec.selector.matchLabels app,%s = %s, want operator,op", namespaces.LabelOperator, labels)
			}
		})
	}
}

// TestMonitorSelectsItsOperators: in the HCP namespace a monitor selects only its
// operator's Services or pods, which carry the operator label; HyperShift's own components
// there carry none. The profile adds the label to the selector; a patch that takes it out
// or names another operator, or a monitor placed without the profile, is refused.
func TestMonitorSelectsItsOperators(t *testing.T) {
	withProfile, withoutProfile := containedEngines("clusters-example")
	monitor := func(selector string) contract.Mutation {
		return policyMutation(contract.ActionApply, "monitoring.coreos.com", "servicemonitors", "openshift-authentication-operator", "metrics",
			"apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: metrics, namespace: openshift-authentication-operator}\n"+
				"spec:\n"+selector+"  endpoints:\n  - port: https\n")
	}
	patch := func(body string) contract.Mutation {
		return mergePatchAfter("monitoring.coreos.com", "servicemonitors", "openshift-authentication-operator", "metrics", body)
	}
	tests := []landsCase{
		{"no selector (every Service of the namespace): narrowed to the operator's, lands", withProfile, []contract.Mutation{monitor("")}, ""},
		{"HyperShift's kube-apiserver by its labels: narrowed to the operator's, lands", withProfile,
			[]contract.Mutation{monitor("  selector: {matchLabels: {app: kube-apiserver}}\n")}, ""},
		{"a patch that takes the label out: refused", withProfile,
			[]contract.Mutation{monitor(""), patch(`{"spec":{"selector":{"matchLabels":{"topolayer.dev/operator":null}}}}`)}, "spec.selector.matchLabels[topolayer.dev/operator]"},
		{"a patch that names another operator: refused", withProfile,
			[]contract.Mutation{monitor(""), patch(`{"spec":{"selector":{"matchLabels":{"topolayer.dev/operator":"other"}}}}`)}, `"other" is not the operator "op"`},
		{"without the profile: refused", withoutProfile, []contract.Mutation{monitor("")}, "spec.selector.matchLabels[topolayer.dev/operator]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			last, landed := landsOnManagement(t, tc.engine, tc.mutations, tc.refused)
			if !landed {
				return
			}
			if got := field(last.Object.Object, []string{"spec", "selector", "matchLabels", namespaces.LabelOperator}); got != "op" {
				t.Errorf("spec.selector.matchLabels[%s] = %q, want op", namespaces.LabelOperator, got)
			}
			if !slices.Contains(last.Transforms, hosted.ProfileHyperShift+"/monitor-own-targets") {
				t.Errorf("transforms %v, want %s/monitor-own-targets named", last.Transforms, hosted.ProfileHyperShift)
			}
		})
	}
}

// field returns the string at path in an unstructured value, a number stepping into a list.
func field(v any, path []string) string {
	for _, p := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			i := 0
			for _, r := range p {
				i = i*10 + int(r-'0')
			}
			if i >= len(c) {
				return ""
			}
			v = c[i]
		default:
			return ""
		}
	}
	s, _ := v.(string)
	return s
}

// TestManagementCARequests: an object asks the management cluster's own controllers for its
// CAs only through keys the hypershift profile withholds; a patch that adds one, or an
// object no profile changed, is refused with the key named.
func TestManagementCARequests(t *testing.T) {
	withProfile, withoutProfile := containedEngines("clusters-example")
	configMap := func(meta string) contract.Mutation {
		return policyMutation(contract.ActionApply, "", "configmaps", "openshift-authentication", "trusted-ca",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: trusted-ca, namespace: openshift-authentication"+meta+"}\n")
	}
	patch := mergePatchAfter("", "configmaps", "openshift-authentication", "trusted-ca",
		`{"metadata":{"labels":{"config.openshift.io/inject-trusted-cabundle":"true"}}}`)
	tests := []landsCase{
		{"the label, with the profile: withheld, lands", withProfile, []contract.Mutation{configMap(", labels: {config.openshift.io/inject-trusted-cabundle: 'true'}")}, ""},
		{"a merge patch adding it after: refused", withProfile, []contract.Mutation{configMap(""), patch}, "metadata.labels[config.openshift.io/inject-trusted-cabundle]"},
		{"the service CA annotation, without the profile: refused", withoutProfile,
			[]contract.Mutation{configMap(", annotations: {service.beta.openshift.io/inject-cabundle: 'true'}")}, "metadata.annotations[service.beta.openshift.io/inject-cabundle]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			last, landed := landsOnManagement(t, tc.engine, tc.mutations, tc.refused)
			if !landed {
				return
			}
			if _, ok := last.Object.GetLabels()[hosted.LabelInjectTrustedCABundle]; ok {
				t.Errorf("the label landed: %v", last.Object.GetLabels())
			}
		})
	}
}

// containedEngines returns the hosted engines of operator "op" for HCP namespace hcp under
// the management cluster's containment, as the hosted topology composes it: with the
// hypershift profile (Pod Security stripped) and without a profile.
func containedEngines(hcp string) (withProfile, withoutProfile translate.Engine) {
	withProfile = profileEngine(hcp, &policy.Policy{PodSecurity: policy.PodSecurityStrip})
	withoutProfile = hostedEngine(hcp)
	for _, e := range []*translate.Engine{&withProfile, &withoutProfile} {
		e.Containment, e.HCPNamespace = hosted.Containment(hcp), hcp
	}
	return withProfile, withoutProfile
}

// mergePatchAfter is a merge patch of an object, after the object's Apply in plan order.
func mergePatchAfter(group, resource, ns, name, body string) contract.Mutation {
	m := policyMutation(contract.ActionPatch, group, resource, ns, name, body)
	m.Metadata.PatchType = contract.PatchTypeMerge
	m.Path = "zz-patch"
	return m
}

// landsCase is a case for landsOnManagement: mutations planned with engine, either all
// landing on the management cluster or the last refused by policy/management-fields.
type landsCase struct {
	name      string
	engine    translate.Engine
	mutations []contract.Mutation
	// refused is part of the reason of the last entry; "" means every entry lands.
	refused string
}

// landsOnManagement plans mutations with e and returns the last entry, and whether it
// landed. With refused, it fails t unless policy/management-fields refused that entry for a
// reason naming refused; without, unless every entry lands on the management cluster.
func landsOnManagement(t *testing.T, e translate.Engine, mutations []contract.Mutation, refused string) (plans.Entry, bool) {
	t.Helper()
	p := e.Plan(&contract.OutputDir{Mutations: mutations})
	last := p.Entries[len(p.Entries)-1]
	if refused != "" {
		wantManagementFieldsRefusal(t, last, refused)
		return last, false
	}
	for _, en := range p.Entries {
		if en.Disposition != routing.Apply || en.Target.Cluster != routing.ClusterManagement {
			t.Fatalf("%s: %s on %s (%s): %s", en.Source, en.Disposition, en.Target.Cluster, en.Rule, en.Reason)
		}
	}
	return last, true
}

// wantManagementFieldsRefusal fails t unless e is refused by policy/management-fields, its
// reason naming refused.
func wantManagementFieldsRefusal(t *testing.T, e plans.Entry, refused string) {
	t.Helper()
	if e.Disposition != routing.Rejected || e.Rule != policy.RuleManagementFields || !strings.Contains(e.Reason, refused) {
		t.Errorf("%s (%s): %s; want refused by %s naming %q", e.Disposition, e.Rule, e.Reason, policy.RuleManagementFields, refused)
	}
}

// TestPrometheusRulesOnManagement: a PrometheusRule placed in the HCP namespace would be
// evaluated by the management cluster's own Prometheus over every tenant's series, its
// alerts sent to that cluster's Alertmanager: it is not on the allow-list, and lands only
// where the configuration allows it for the operator, reviewed.
func TestPrometheusRulesOnManagement(t *testing.T) {
	withProfile, _ := containedEngines("clusters-example")
	allowed := withProfile
	group := "monitoring.coreos.com"
	allowed.Policy = &policy.Policy{PodSecurity: policy.PodSecurityStrip,
		Management: &policy.ManagementAllowance{Kinds: []routing.Match{{Group: &group, Resource: "prometheusrules"}}}}
	rule := policyMutation(contract.ActionApply, group, "prometheusrules", "openshift-authentication-operator", "alerts",
		"apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: alerts, namespace: openshift-authentication-operator}\n"+
			"spec:\n  groups:\n  - name: page\n    rules:\n    - alert: KubeAPIDown\n      expr: vector(1)\n      labels: {severity: critical, namespace: openshift-kube-apiserver}\n")
	for _, tc := range []struct {
		name    string
		engine  translate.Engine
		refused bool
	}{
		{"by default: refused", withProfile, true},
		{"allowed for the operator: lands", allowed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.engine.Plan(&contract.OutputDir{Mutations: []contract.Mutation{rule}}).Entries[0]
			switch {
			case tc.refused && (e.Disposition != routing.Rejected || e.Rule != policy.RuleManagementKind || !strings.Contains(e.Reason, "prometheusrules.monitoring.coreos.com is not on the management cluster's allow-list")):
				t.Errorf("%s (%s): %s; want refused by %s", e.Disposition, e.Rule, e.Reason, policy.RuleManagementKind)
			case !tc.refused && (e.Disposition != routing.Apply || e.Target.Cluster != routing.ClusterManagement):
				t.Errorf("%s on %s (%s): %s; want it applied on the management cluster", e.Disposition, e.Target.Cluster, e.Rule, e.Reason)
			}
		})
	}
}
