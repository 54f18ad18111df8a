package e2e

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/contract/corpus"
	"github.com/topolayer/topolayer/e2e/cluster"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

// TestSelectorScopeOnServer translates each CAO corpus case into a fresh HCP namespace of the
// management server, has the server accept (dry run) the translated Services,
// PodDisruptionBudgets, NetworkPolicies and workloads, creates a Pod from every translated
// pod template plus pods labelled like the hosted control plane's own components, and lists
// pods through the server with each selector: every selector returns only pods of its own
// simulated namespace.
func TestSelectorScopeOnServer(t *testing.T) {
	if os.Getenv(corpus.EnvVar) == "" {
		t.Skipf("%s is not set", corpus.EnvVar)
	}
	cfg := hosted.Config(cluster.Management)
	cs, dyn := clients(t, cfg)
	for _, c := range corpus.CAOCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			ctx := t.Context()
			out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			declared, err := contract.ParseOutputResources(mustRead(t, c.OutputResources))
			if err != nil {
				t.Fatal(err)
			}
			ns := newNamespace(t, cfg)
			engine := translate.Engine{
				Topology: translate.TopologyHosted, Operator: corpus.CAO, Declared: declared,
				Router: &routing.Table{Rules: routing.HostedDefaults(routing.ConvertClusterRBAC)},
				Names:  namespaces.Hosted{Namespace: ns}, Annotate: true, HCPNamespace: ns,
			}
			plan := engine.Plan(&contract.OutputDir{Mutations: withImages(t, out.Mutations)})
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
			pod(map[string]string{})
			pod(map[string]string{"app": "oauth-openshift", translate.LabelHostedControlPlane: ns})
			pod(map[string]string{"app": "openshift-oauth-apiserver", "apiserver": "true", translate.LabelHostedControlPlane: ns})

			type selector struct {
				where string
				ns    string
				sel   labels.Selector
			}
			var selectors []selector
			for _, e := range plan.Entries {
				if e.Disposition != routing.Apply || e.Object == nil || e.Target.Cluster != routing.ClusterManagement || e.Target.Namespace != ns || e.Action.IsStatus() {
					continue
				}
				obj := e.Object.Object
				switch e.Source.Resource {
				case "services", "poddisruptionbudgets", "networkpolicies", "deployments":
					dry := e.Object.DeepCopy()
					if _, err := dyn.Resource(e.Target.GroupVersionResource()).Namespace(ns).Create(ctx, dry, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
						t.Errorf("%s: refused: %v", e.Source, err)
					}
				}
				switch e.Source.Resource {
				case "deployments":
					lbls, _, _ := unstructured.NestedStringMap(obj, "spec", "template", "metadata", "labels")
					pod(lbls)
					selectors = append(selectors, selector{e.Source.String() + " spec.selector", e.Source.Namespace, labelSelector(t, obj, "spec", "selector")})
				case "services":
					if m, ok, _ := unstructured.NestedStringMap(obj, "spec", "selector"); ok {
						selectors = append(selectors, selector{e.Source.String() + " spec.selector", e.Source.Namespace, labels.SelectorFromSet(m)})
					}
				case "poddisruptionbudgets":
					selectors = append(selectors, selector{e.Source.String() + " spec.selector", e.Source.Namespace, labelSelector(t, obj, "spec", "selector")})
				case "networkpolicies":
					selectors = append(selectors, selector{e.Source.String() + " spec.podSelector", e.Source.Namespace, labelSelector(t, obj, "spec", "podSelector")})
				}
			}
			if len(selectors) == 0 {
				return
			}
			for _, s := range selectors {
				pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: s.sel.String()})
				if err != nil {
					t.Fatalf("%s: list pods with %q: %v", s.where, s.sel, err)
				}
				for _, p := range pods.Items {
					if got := p.Labels[namespaces.LabelNamespace]; got != s.ns {
						t.Errorf("%s (%s) selects pod %s of simulated namespace %q (labels %v)", s.where, s.sel, p.Name, got, p.Labels)
					}
				}
			}
			t.Logf("%d selectors listed against the server", len(selectors))
		})
	}
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
