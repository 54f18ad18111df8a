package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/topolayer/topolayer/contract"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/samples/sample"
	"github.com/topolayer/topolayer/internal/samples/sampleaudit"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/sdk"
)

// scopeCase is one operator output translated by TestSelectorScopeOnServer.
type scopeCase struct {
	name, operator string
	out            *contract.OutputDir
	declared       *contract.OutputResources
}

// scopeCases are the CAO corpus cases and the sample operators' test cases.
func scopeCases(t *testing.T) []scopeCase {
	t.Helper()
	var out []scopeCase
	if os.Getenv(corpus.EnvVar) != "" {
		for _, c := range corpus.CAOCases(t) {
			dir, declared := readCase(t, c)
			out = append(out, scopeCase{name: c.Name, operator: corpus.CAO, out: dir, declared: declared})
		}
	}
	sampleOp, err := sample.New("registry.example/sample:e2e")
	if err != nil {
		t.Fatal(err)
	}
	auditOp, err := sampleaudit.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []*sdk.Operator{sampleOp, auditOp} {
		dirs, err := filepath.Glob(filepath.Join("..", "examples", "sample-operators", "tests", op.Name, "*", "expected-output"))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			dir, err := contract.ReadOutputDir(d, contract.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, scopeCase{name: op.Name + "/" + filepath.Base(filepath.Dir(d)), operator: op.Name, out: dir, declared: &op.OutputResources})
		}
	}
	return out
}

// podTemplateLabels returns the labels of the pods an object of resource runs, and whether
// it has pods: a Pod's own, a workload's pod template's.
func podTemplateLabels(resource string, obj map[string]any) (map[string]string, bool) {
	var path []string
	switch resource {
	case "pods":
		path = []string{"metadata", "labels"}
	case "deployments", "statefulsets", "daemonsets", "replicasets", "jobs", "replicationcontrollers":
		path = []string{"spec", "template", "metadata", "labels"}
	case "cronjobs":
		path = []string{"spec", "jobTemplate", "spec", "template", "metadata", "labels"}
	default:
		return nil, false
	}
	m, _, _ := unstructured.NestedStringMap(obj, path...)
	return m, true
}

// TestSelectorScopeOnServer translates every CAO corpus case and every sample operator test
// case into one fresh namespace of the management server, which stands for the HCP
// namespace all of a hosted control plane's operators share (clusters-example itself is
// shared by this package and only read), and has the server accept (dry run) every
// translated object placed there. It creates a Pod labelled as every translated pod
// template (and bare Pod) of every case, plus pods labelled like the hosted control plane's
// own components, and then lists pods through the server with each selector of each case
// (Service, workload, PodDisruptionBudget, NetworkPolicy podSelector and in-namespace
// peers): every selector returns only pods of the simulated namespaces it names, its own
// for all but peers, and a default-deny-all policy returns exactly the pods of its own
// simulated namespace, not those of the other simulated namespaces nor the HCP's.
func TestSelectorScopeOnServer(t *testing.T) {
	cfg := hosted.Config(cluster.Management)
	cs, dyn := clients(t, cfg)
	ctx := t.Context()
	cases := scopeCases(t)
	if len(cases) == 0 {
		t.Fatal("no case")
	}
	ns := newNamespace(t, cfg)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pod := func(lbls map[string]string) {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Labels: lbls},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c"}}},
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %v: %v", lbls, err)
		}
	}
	// Pods of the hosted control plane's own components, which no selector may reach.
	pod(map[string]string{})
	pod(map[string]string{"app": "oauth-openshift", hypershift.LabelHostedControlPlane: ns})
	pod(map[string]string{"app": "openshift-oauth-apiserver", "apiserver": "true", hypershift.LabelHostedControlPlane: ns})
	pod(map[string]string{"app": "sample", hypershift.LabelHostedControlPlane: ns})

	type selector struct {
		where   string
		ns      string // the simulated namespace of the selecting object
		peer    bool   // a NetworkPolicy peer: it may name other simulated namespaces
		denyAll bool   // a default-deny-all NetworkPolicy
		sel     labels.Selector
	}
	var selectors []selector
	podsOf := map[string]int{} // pods created from templates, per simulated namespace
	templatePods, accepted := 0, 0
	for _, c := range cases {
		engine := translate.Engine{
			Topology: plans.TopologyHosted, Operator: c.operator, Declared: c.declared,
			Router: &routing.Table{Rules: routing.HostedDefaults(routing.ConvertClusterRBAC)},
			Names:  namespaces.Hosted{Namespace: ns}, Stages: translate.HostedStages(), HCPNamespace: ns,
		}
		plan := engine.Plan(&contract.OutputDir{Mutations: withImages(t, c.out.Mutations)})
		for _, e := range plan.Entries {
			if e.Disposition != routing.Apply || e.Object == nil || e.Target.Cluster != routing.ClusterManagement || e.Target.Namespace != ns || e.Action.IsStatus() {
				continue
			}
			where := c.name + ": " + e.Source.String()
			if _, err := dyn.Resource(e.Target.GroupVersionResource()).Namespace(ns).Create(ctx, e.Object.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("%s: refused: %v", where, err)
			} else {
				accepted++
			}
			obj := e.Object.Object
			if lbls, ok := podTemplateLabels(e.Source.Resource, obj); ok && e.Source.Namespace != "" {
				pod(lbls)
				podsOf[e.Source.Namespace]++
				templatePods++
			}
			switch e.Source.Resource {
			case "deployments", "statefulsets", "daemonsets", "replicasets", "jobs":
				selectors = append(selectors, selector{where: where + " spec.selector", ns: e.Source.Namespace, sel: labelSelector(t, obj, "spec", "selector")})
			case "services":
				if m, ok, _ := unstructured.NestedStringMap(obj, "spec", "selector"); ok {
					selectors = append(selectors, selector{where: where + " spec.selector", ns: e.Source.Namespace, sel: labels.SelectorFromSet(m)})
				}
			case "poddisruptionbudgets":
				selectors = append(selectors, selector{where: where + " spec.selector", ns: e.Source.Namespace, sel: labelSelector(t, obj, "spec", "selector")})
			case "networkpolicies":
				selectors = append(selectors, selector{where: where + " spec.podSelector", ns: e.Source.Namespace, denyAll: e.Source.Name == "default-deny-all", sel: labelSelector(t, obj, "spec", "podSelector")})
				for _, dir := range [][2]string{{"ingress", "from"}, {"egress", "to"}} {
					rules, _, _ := unstructured.NestedSlice(obj, "spec", dir[0])
					for i, r := range rules {
						peers, _, _ := unstructured.NestedSlice(r.(map[string]any), dir[1])
						for j, p := range peers {
							peer := p.(map[string]any)
							if _, ok := peer["podSelector"]; !ok {
								continue
							}
							// Only peers in the HCP namespace select pods there.
							if nsSel, ok := peer["namespaceSelector"]; ok {
								if m, _, _ := unstructured.NestedStringMap(nsSel.(map[string]any), "matchLabels"); m["kubernetes.io/metadata.name"] != ns {
									continue
								}
							}
							selectors = append(selectors, selector{where: fmt.Sprintf("%s spec.%s[%d].%s[%d].podSelector", where, dir[0], i, dir[1], j), ns: e.Source.Namespace, peer: true, sel: labelSelector(t, peer, "podSelector")})
						}
					}
				}
			}
		}
	}
	if len(podsOf) < 2 {
		t.Fatalf("pods from the templates of %d simulated namespaces (%v); the test needs two or more", len(podsOf), podsOf)
	}
	selected, denyAll := 0, 0
	for _, s := range selectors {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: s.sel.String()})
		if err != nil {
			t.Fatalf("%s: list pods with %q: %v", s.where, s.sel, err)
		}
		allowed := []string{s.ns}
		if s.peer {
			allowed = namespaceRequirement(s.sel)
		}
		for _, p := range pods.Items {
			if got := p.Labels[namespaces.LabelNamespace]; !slices.Contains(allowed, got) {
				t.Errorf("%s (%s) selects pod %s of simulated namespace %q (labels %v), want only %v", s.where, s.sel, p.Name, got, p.Labels, allowed)
			}
		}
		if s.denyAll {
			denyAll++
			if len(pods.Items) != podsOf[s.ns] {
				t.Errorf("%s (%s) selects %d pods, want the %d pods of %s", s.where, s.sel, len(pods.Items), podsOf[s.ns], s.ns)
			}
		}
		selected += len(pods.Items)
	}
	if denyAll == 0 && os.Getenv(corpus.EnvVar) != "" {
		t.Error("no default-deny-all policy listed")
	}
	t.Logf("%d cases: %d objects accepted, %d pods from templates (%v), %d selectors listed against the server (%d deny-all), %d pods selected",
		len(cases), accepted, templatePods, podsOf, len(selectors), denyAll, selected)
}

// namespaceRequirement returns the simulated namespaces sel requires of a pod's
// namespaces.LabelNamespace; none when it does not require it.
func namespaceRequirement(sel labels.Selector) []string {
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if r.Key() == namespaces.LabelNamespace && (r.Operator() == selection.In || r.Operator() == selection.Equals || r.Operator() == selection.DoubleEquals) {
			return r.Values().UnsortedList()
		}
	}
	return nil
}

func labelSelector(t *testing.T, obj map[string]any, path ...string) labels.Selector {
	t.Helper()
	m, _, _ := unstructured.NestedMap(obj, path...)
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		t.Fatal(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}
