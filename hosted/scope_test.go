package hosted_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/contract/corpus"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

// hcpPods are labels of the hosted control plane's own pods, which no translated selector
// may select.
var hcpPods = []map[string]string{
	{},
	{"app": "kube-apiserver", translate.LabelHostedControlPlane: hcp},
	{"app": "etcd", translate.LabelHostedControlPlane: hcp},
	{"app": "oauth-openshift", translate.LabelHostedControlPlane: hcp},
	{"app": "openshift-oauth-apiserver", translate.LabelHostedControlPlane: hcp},
}

// TestCorpusSimulatedNamespaces checks on every CAO corpus case that the translated objects
// keep to their simulated namespaces: the plan-level check passes, the default-deny-all
// policies select only their own namespace's pods, the serving-cert annotation names the
// translated Secret, and the cliconfig's Service URLs name Services the plans place.
func TestCorpusSimulatedNamespaces(t *testing.T) {
	names := namespaces.Hosted{Namespace: hcp}
	services := map[string]bool{} // DNS names of the Services the plans place in hcp
	var urls []string             // Service DNS names in ConfigMap data, with where they are
	denyAll := 0
	for _, c := range corpus.Cases(t) {
		if c.Operator != corpus.CAO {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			_, plan := planCase(t, c)
			for _, v := range translate.CheckSimulatedNamespaces(plan, hcp, nil, hcpPods...) {
				t.Errorf("%s: %s", plan.Entries[v.Entry].Source, v.Message)
			}
			for _, e := range plan.Entries {
				for _, w := range e.Warnings {
					if strings.HasPrefix(w, translate.RuleScopeCheck) {
						t.Errorf("%s: %s", e.Source, w)
					}
				}
				if e.Disposition != routing.Apply || e.Object == nil || e.Target.Cluster != routing.ClusterManagement {
					continue
				}
				obj := e.Object.Object
				switch {
				case e.Source.Resource == "services":
					services[e.Target.Name+"."+e.Target.Namespace+".svc"] = true
					for _, a := range []string{"service.alpha.openshift.io/serving-cert-secret-name", "service.beta.openshift.io/serving-cert-secret-name"} {
						got, ok := e.Object.GetAnnotations()[a]
						if !ok {
							continue
						}
						orig := e.Source
						want, err := names.ToTarget(routing.ClusterManagement, contract.Identity{Resource: "secrets", Namespace: orig.Namespace, Name: standaloneAnnotation(t, c, e, a)})
						if err != nil {
							t.Fatal(err)
						}
						if got != want.Name {
							t.Errorf("%s: %s is %q, want the translated secret %q", e.Source, a, got, want.Name)
						}
					}
				case e.Source.Resource == "networkpolicies" && e.Source.Name == "default-deny-all":
					denyAll++
					sel, _, _ := unstructured.NestedStringMap(obj, "spec", "podSelector", "matchLabels")
					if len(sel) != 1 || sel[namespaces.LabelNamespace] != e.Source.Namespace {
						t.Errorf("%s: podSelector %v, want only the pods of %s", e.Source, sel, e.Source.Namespace)
					}
				case e.Source.Resource == "configmaps":
					data, _, _ := unstructured.NestedStringMap(obj, "data")
					for k, v := range data {
						for _, s := range translate.ServiceDNSNames(v) {
							urls = append(urls, c.Name+" "+e.Source.String()+" "+k+": "+s)
						}
					}
				}
			}
		})
	}
	if denyAll == 0 {
		t.Error("no default-deny-all policy in the corpus")
	}
	for _, u := range urls {
		ns, name, _ := strings.Cut(u[strings.LastIndex(u, " ")+1:], "/")
		if ns != hcp {
			if strings.HasPrefix(ns, "openshift-authentication") || strings.HasPrefix(ns, "openshift-oauth") {
				t.Errorf("%s: names a Service of a simulated namespace by its standalone name", u)
			}
			continue
		}
		if !services[name+"."+ns+".svc"] {
			t.Errorf("%s: names a Service no plan places (%v)", u, services)
		}
	}
	if len(urls) == 0 {
		t.Error("no Service URL in the corpus's ConfigMaps")
	}
}

// standaloneAnnotation returns the value annotation a had on the operator's original object.
func standaloneAnnotation(t *testing.T, c corpus.Case, e translate.Entry, a string) string {
	t.Helper()
	out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range out.Mutations {
		if m.Path != e.SourcePath {
			continue
		}
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(m.Body, &u.Object); err != nil {
			t.Fatal(err)
		}
		return u.GetAnnotations()[a]
	}
	t.Fatalf("%s: no source mutation", e.Source)
	return ""
}
