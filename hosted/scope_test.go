package hosted_test

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/samples/sample"
	"github.com/topolayer/topolayer/internal/samples/sampleaudit"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/references"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/sdk"
	"github.com/topolayer/topolayer/topology"
)

// hcpPods are labels of the hosted control plane's own pods, which no translated selector
// may select.
var hcpPods = []map[string]string{
	{},
	{"app": "kube-apiserver", hosted.LabelHostedControlPlane: hcp},
	{"app": "etcd", hosted.LabelHostedControlPlane: hcp},
	{"app": "oauth-openshift", hosted.LabelHostedControlPlane: hcp},
	{"app": "openshift-oauth-apiserver", hosted.LabelHostedControlPlane: hcp},
}

// TestCorpusSimulatedNamespaces checks on every CAO corpus case that the translated objects
// keep to their simulated namespaces: the plan-level check passes, the default-deny-all
// policies select only their own namespace's pods, the serving-cert annotation is withheld
// from the management cluster and its record names the translated Secret, and the cliconfig's Service URLs name Services the plans place.
func TestCorpusSimulatedNamespaces(t *testing.T) {
	var seen simulatedSeen
	for _, c := range corpus.Cases(t) {
		if c.Operator != corpus.CAO {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			out, plan := planCase(t, c)
			seen.check(t, c.Name, out, plan)
		})
	}
	if seen.denyAll == 0 {
		t.Error("no default-deny-all policy in the corpus")
	}
	if seen.servingCerts == 0 {
		t.Error("no serving-cert annotation in the corpus")
	}
	if len(seen.urls) == 0 {
		t.Error("no Service URL in the corpus's ConfigMaps")
	}
	seen.checkURLs(t)
}

// TestSampleOperatorsSimulatedNamespaces makes the same checks on every test case of the
// sample operators (examples/sample-operators/tests), translated with their own
// declarations and examples/hosted-demo.yaml.
func TestSampleOperatorsSimulatedNamespaces(t *testing.T) {
	cfg, err := config.Load("../examples/hosted-demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sampleOp, err := sample.New("registry.example/sample:test")
	if err != nil {
		t.Fatal(err)
	}
	auditOp, err := sampleaudit.New()
	if err != nil {
		t.Fatal(err)
	}
	var seen simulatedSeen
	cases := 0
	for _, op := range []*sdk.Operator{sampleOp, auditOp} {
		engine, err := topology.Engine(cfg, op.Name, &op.OutputResources)
		if err != nil {
			t.Fatal(err)
		}
		dirs, err := filepath.Glob(filepath.Join("..", "examples", "sample-operators", "tests", op.Name, "*", "expected-output"))
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range dirs {
			cases++
			name := op.Name + "/" + filepath.Base(filepath.Dir(dir))
			t.Run(name, func(t *testing.T) {
				out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				plan := engine.Plan(out)
				for _, e := range plan.Rejected() {
					t.Errorf("rejected: %s: %s: %s", e.Source, e.Rule, e.Reason)
				}
				seen.check(t, name, out, plan)
			})
		}
	}
	if cases == 0 {
		t.Fatal("no sample operator test case")
	}
	seen.checkURLs(t)
	t.Logf("%d cases, %d Services, %d scoped selectors", cases, len(seen.services), seen.selectors)
}

// simulatedSeen gathers, over the plans of several cases, what TestCorpusSimulatedNamespaces
// checks across them.
type simulatedSeen struct {
	services     map[string]bool // DNS names of the Services the plans place in hcp
	urls         []string        // Service DNS names in ConfigMap data, with where they are
	denyAll      int
	servingCerts int
	selectors    int // changes by RuleSelectorScope
}

// check makes the checks of one plan, translated from out.
func (s *simulatedSeen) check(t *testing.T, name string, out *contract.OutputDir, plan *plans.Plan) {
	t.Helper()
	if s.services == nil {
		s.services = map[string]bool{}
	}
	names := namespaces.Hosted{Namespace: hcp}
	for _, v := range scope.Check(plan, hcp, nil, hcpPods...) {
		t.Errorf("%s: %s", plan.Entries[v.Entry].Source, v.Message)
	}
	for _, e := range plan.Entries {
		for _, w := range e.Warnings {
			if strings.HasPrefix(w, scope.RuleCheck) {
				t.Errorf("%s: %s", e.Source, w)
			}
		}
		for _, c := range e.Changes {
			if c.By == scope.Rule {
				s.selectors++
			}
		}
		if e.Disposition != routing.Apply || e.Object == nil || e.Target.Cluster != routing.ClusterManagement {
			continue
		}
		obj := e.Object.Object
		switch {
		case e.Source.Resource == "services":
			s.services[e.Target.Name+"."+e.Target.Namespace+".svc"] = true
			// The request is withheld from the management cluster's own service-ca operator;
			// the record the inverse reads names the translated Secret.
			_, withheld, _ := transform.Withheld(e.Object.GetAnnotations())
			for _, a := range []string{"service.alpha.openshift.io/serving-cert-secret-name", "service.beta.openshift.io/serving-cert-secret-name"} {
				if v, ok := e.Object.GetAnnotations()[a]; ok {
					t.Errorf("%s: %s=%q lands on the management cluster, where its service-ca operator would sign it", e.Source, a, v)
				}
				got, ok := withheld[a]
				if !ok {
					continue
				}
				s.servingCerts++
				want, err := names.ToTarget(routing.ClusterManagement, contract.Identity{Resource: "secrets", Namespace: e.Source.Namespace, Name: standaloneAnnotation(t, out, e, a)})
				if err != nil {
					t.Fatal(err)
				}
				if got != want.Name {
					t.Errorf("%s: %s is %q, want the translated secret %q", e.Source, a, got, want.Name)
				}
			}
		case e.Source.Resource == "networkpolicies" && e.Source.Name == "default-deny-all":
			s.denyAll++
			sel, _, _ := unstructured.NestedStringMap(obj, "spec", "podSelector", "matchLabels")
			if len(sel) != 1 || sel[namespaces.LabelNamespace] != e.Source.Namespace {
				t.Errorf("%s: podSelector %v, want only the pods of %s", e.Source, sel, e.Source.Namespace)
			}
		case e.Source.Resource == "configmaps":
			data, _, _ := unstructured.NestedStringMap(obj, "data")
			for k, v := range data {
				for _, svc := range references.ServiceDNSNames(v) {
					s.urls = append(s.urls, name+" "+e.Source.String()+" "+k+": "+svc)
				}
			}
		}
	}
}

// checkURLs checks that every Service URL names a Service some plan places, by its hosted
// name, and none a Service of a simulated namespace by its standalone name.
func (s *simulatedSeen) checkURLs(t *testing.T) {
	t.Helper()
	for _, u := range s.urls {
		ns, name, _ := strings.Cut(u[strings.LastIndex(u, " ")+1:], "/")
		if ns != hcp {
			if strings.HasPrefix(ns, "openshift-authentication") || strings.HasPrefix(ns, "openshift-oauth") || strings.HasPrefix(ns, "openshift-sample") {
				t.Errorf("%s: names a Service of a simulated namespace by its standalone name", u)
			}
			continue
		}
		if !s.services[name+"."+ns+".svc"] {
			t.Errorf("%s: names a Service no plan places (%v)", u, s.services)
		}
	}
}

// standaloneAnnotation returns the value annotation a had on the operator's original object.
func standaloneAnnotation(t *testing.T, out *contract.OutputDir, e plans.Entry, a string) string {
	t.Helper()
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
