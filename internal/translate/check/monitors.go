package check

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// groupMonitoring is the group of the Prometheus operator's ServiceMonitor and PodMonitor.
const groupMonitoring = "monitoring.coreos.com"

// monitorEndpoints are, by resource, where a monitor lists its scrape endpoints.
var monitorEndpoints = map[string]string{"servicemonitors": "endpoints", "podmonitors": "podMetricsEndpoints"}

// monitorFiles are the fields of a scrape endpoint that read a file of the Prometheus that
// scrapes it (its own service account token, its client certificate and key) and send what
// they hold to the target.
var monitorFiles = [][]string{
	{"bearerTokenFile"}, {"tlsConfig", "caFile"}, {"tlsConfig", "certFile"}, {"tlsConfig", "keyFile"},
}

// monitorProxies are the fields of a scrape endpoint that send the scrape, with its
// credentials, through a proxy of the operator's choosing.
var monitorProxies = [][]string{{"proxyUrl"}, {"proxyURL"}, {"proxyFromEnvironment"}, {"proxyConnectHeader"}}

// monitorReferences are the fields of a scrape endpoint that name a Secret or ConfigMap
// whose content the Prometheus that scrapes it sends to the target: in the monitor's
// namespace, the HCP namespace, where HyperShift's own certificates and kubeconfigs are too.
// The CA it verifies the target with (tlsConfig.ca) is not among them: a CA is sent nowhere,
// and the namespace's own (openshift-service-ca.crt, HyperShift's root CA) may serve.
var monitorReferences = []struct {
	resource string
	path     []string
}{
	{"secrets", []string{"bearerTokenSecret"}},
	{"secrets", []string{"basicAuth", "username"}},
	{"secrets", []string{"basicAuth", "password"}},
	{"secrets", []string{"authorization", "credentials"}},
	{"secrets", []string{"oauth2", "clientSecret"}},
	{"secrets", []string{"oauth2", "clientId", "secret"}},
	{"configmaps", []string{"oauth2", "clientId", "configMap"}},
	{"secrets", []string{"tlsConfig", "cert", "secret"}},
	{"configmaps", []string{"tlsConfig", "cert", "configMap"}},
	{"secrets", []string{"tlsConfig", "keySecret"}},
}

// monitorFields returns why a ServiceMonitor or PodMonitor may not land on the management
// cluster at target as it is: "" when it may. The management cluster's Prometheus scrapes
// with what the monitor names, so a monitor may scrape only its own namespace
// (spec.namespaceSelector absent, or naming the HCP namespace alone) and there only its
// operator's Services or pods (spec.selector requires namespaces.LabelOperator to be the
// operator, as hypershift/monitor-own-targets writes), read no file of that
// Prometheus nor take a scrape class of its (spec.scrapeClass), use no proxy, not point the scrape at another address (a relabeling whose
// target is __address__), and name as credentials only Secrets and ConfigMaps the operator
// placed (its own names in a simulated namespace, not the environment's, not an alias).
// What is not known safe is refused.
func (e *Checker) monitorFields(obj *unstructured.Unstructured, target contract.Identity) string {
	list, ok := monitorEndpoints[target.Resource]
	if target.Group != groupMonitoring || !ok {
		return ""
	}
	u := obj.Object
	if sel, found := mappingAt(u, "spec", "namespaceSelector"); found {
		if everyNamespace, _ := sel["any"].(bool); everyNamespace {
			return "spec.namespaceSelector.any: the management cluster's Prometheus would scrape every namespace; a monitor scrapes its own"
		}
		names, _, _ := unstructured.NestedStringSlice(sel, "matchNames")
		for i, n := range names {
			if n != target.Namespace {
				return fmt.Sprintf("spec.namespaceSelector.matchNames[%d]: %q is not the monitor's own namespace %s", i, n, target.Namespace)
			}
		}
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(u, "spec", "scrapeClass"); found {
		return "spec.scrapeClass: a scrape class of the management cluster's Prometheus brings its TLS and authorization settings, its own files among them, to this scrape"
	}
	if own, _, _ := unstructured.NestedString(u, "spec", "selector", "matchLabels", namespaces.LabelOperator); own != e.Operator || own == "" {
		return fmt.Sprintf("spec.selector.matchLabels[%s]: %q is not the operator %q: the management cluster's Prometheus would scrape the Services and pods of the hosted control plane's own components; a monitor selects its operator's own", namespaces.LabelOperator, own, e.Operator)
	}
	endpoints := listAt(u, "spec", list)
	for i, ep := range endpoints {
		m, _ := ep.(map[string]any)
		at := fmt.Sprintf("spec.%s[%d]", list, i)
		for _, f := range slices.Concat(monitorFiles, monitorProxies) {
			if _, found, _ := unstructured.NestedFieldNoCopy(m, f...); found {
				return fmt.Sprintf("%s.%s: the management cluster's Prometheus would read its own files or use a proxy of the operator's choosing for this scrape", at, strings.Join(f, "."))
			}
		}
		relabelings := listAt(m, "relabelings")
		for j, r := range relabelings {
			if rm, _ := r.(map[string]any); rm["targetLabel"] == "__address__" {
				return fmt.Sprintf("%s.relabelings[%d].targetLabel: __address__ points the scrape, with its credentials, at another address", at, j)
			}
		}
		for _, ref := range monitorReferences {
			name, found, _ := unstructured.NestedString(m, append(slices.Clone(ref.path), "name")...)
			if !found {
				continue
			}
			if why := e.operatorsOwn(target.Namespace, ref.resource, name); why != "" {
				return fmt.Sprintf("%s.%s.name: %s %q %s", at, strings.Join(ref.path, "."), ref.resource, name, why)
			}
		}
	}
	return ""
}

// operatorsOwn returns why the object resource/name of the HCP namespace ns is not one the
// operator placed there: "" when it is (its name maps back to an object of a simulated
// namespace, and no alias makes it the environment's).
func (e *Checker) operatorsOwn(ns, resource, name string) string {
	id := contract.Identity{Version: "v1", Resource: resource, Namespace: ns, Name: name}
	if e.Containment != nil && slices.ContainsFunc(e.Containment.ReadOnly, func(r contract.Identity) bool { return r.Key() == id.Key() }) {
		return "is the environment's own object (an alias): the scrape would send it to the target"
	}
	if e.Names == nil {
		return ""
	}
	src, err := e.Names.ToSource(routing.ClusterManagement, id, nil)
	if err != nil || src.Namespace == ns {
		return "is not one of the operator's objects: the scrape would send the environment's to the target"
	}
	return ""
}
