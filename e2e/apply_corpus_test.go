package e2e

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// TestApplyContractTestOutputs applies the small valid output directory of contracttest in
// hosted mode. As written, the servers refuse most of it (the Deployment has no selector nor
// containers, the translated Event's involvedObject.namespace is not its own namespace, the
// CSR has no request, the Authentication status writes need an object nobody created), so
// validation fails and nothing is written. Its ConfigMap entries alone (a create and a merge
// patch) land where the plan says.
func TestApplyContractTestOutputs(t *testing.T) {
	const operator = "sample-operator"
	all := contracttest.ValidMutations()
	plan := hostedPlan(t, operator, contracttest.ValidOutputResources(), all...)
	_, dyn := clients(t, hosted.Config(cluster.Management))
	hcpNS := hosted.HostedControlPlane().Namespace
	settings := dyn.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(hcpNS)

	counter := &mutatingCounter{}
	res, err := apply.ApplyPlan(t.Context(), plan, hostedTargets(t, operator, counter))
	if err == nil {
		t.Fatal("the plan with an invalid Deployment applied")
	}
	t.Logf("validation refused the whole plan: %v", err)
	var failed int
	for _, r := range res {
		if r.Status == apply.StatusFailed {
			failed++
		}
	}
	if failed == 0 || counter.n.Load() != 0 {
		t.Errorf("%d failed entries, %d mutating requests; want some and 0", failed, counter.n.Load())
	}
	if _, err := settings.Get(t.Context(), "openshift-sample--settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the ConfigMap was written by a plan that failed validation: %v", err)
	}

	var kept []contract.Mutation
	for _, m := range all {
		if m.Metadata.ResourceType.Resource == "configmaps" {
			kept = append(kept, m)
		}
	}
	plan = hostedPlan(t, operator, contracttest.ValidOutputResources(), kept...)
	res = mustApply(t, plan, hostedTargets(t, operator, nil))
	for _, r := range res {
		if r.Status != apply.StatusApplied {
			t.Errorf("%s %s: %s", r.Action, r.Identity, r.Status)
		}
	}
	cm, err := settings.Get(t.Context(), "openshift-sample--settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if data(t, cm, "replicas") != "2" || data(t, cm, "message") != "hello" {
		t.Errorf("settings data = %v, want the created replicas and the merge-patched message", cm.Object["data"])
	}
	checkOwned(t, cm, contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-sample", Name: "settings"}, operator, true)
}

// TestApplyCAOCorpus applies every apply entry of every cluster-authentication-operator
// corpus case in hosted mode, in case order, and checks every object at its planned location.
// Every entry must be accepted by the servers.
//
// What the environment would already hold is created first: the shadow Authentication
// "cluster" (the operator's CR, written once through topolayer, so with its standalone
// identity annotations and operator label: the cases Update it and write its status; the
// shadow ClusterOperator is created by the minimal-cluster case itself), on the guest the
// namespaces openshift-authentication and openshift-oauth-apiserver that a guest cluster has
// and the cases write into. The rolebindingrestrictions CRD that the harness installed (the
// cases create it) carries no topolayer mark: the targets adopt it.
// The corpus Deployments have no image (the operator ran without its image environment
// variables); withImages fills that one field, as the operator's environment would.
func TestApplyCAOCorpus(t *testing.T) {
	if os.Getenv(corpus.EnvVar) == "" {
		t.Skipf("%s is not set", corpus.EnvVar)
	}
	const operator = corpus.CAO
	ctx := t.Context()
	hcpNS := hosted.HostedControlPlane().Namespace
	_, mdyn := clients(t, hosted.Config(cluster.Management))
	guest, _ := clients(t, hosted.Config(cluster.Guest))

	authID := contract.Identity{Group: "operator.openshift.io", Version: "v1", Resource: "authentications", Name: "cluster"}
	auth := object(t, "apiVersion: operator.openshift.io.shadow.topolayer.dev/v1\nkind: Authentication\nmetadata: {name: cluster}\nspec: {managementState: Managed}\n")
	auth.SetNamespace(hcpNS)
	auth.SetAnnotations(namespaces.SourceAnnotations(authID))
	auth.SetLabels(map[string]string{namespaces.LabelOperator: operator})
	for _, o := range []struct {
		gvr schema.GroupVersionResource
		obj *unstructured.Unstructured
	}{{shadowOperatorV1.WithResource("authentications"), auth}} {
		if _, err := mdyn.Resource(o.gvr).Namespace(hcpNS).Create(ctx, o.obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %s: %v", o.gvr.Resource, err)
		}
	}
	for _, ns := range []string{"openshift-authentication", "openshift-oauth-apiserver"} {
		_, err := guest.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	// The CRD the harness installed (as a HyperShift guest has it) carries no topolayer mark:
	// the cases create it, so it is adopted, in place.
	const crdName = "rolebindingrestrictions.authorization.openshift.io"
	_, gdyn := clients(t, hosted.Config(cluster.Guest))
	crds := gdyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crdBefore, err := crds.Get(ctx, crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	targets := hostedTargetsAdopting(t, operator, nil, nil, &apply.Adoption{})
	refusing := hostedTargetsAdopting(t, operator, nil, nil, nil)
	refusedByName := false
	var total, accepted int
	var plans []*plans.Plan
	for _, c := range corpus.CAOCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out, declared := readCase(t, c)
			plan := hostedPlan(t, operator, declared, withImages(t, out.Mutations)...)
			total += plan.Summary.Apply
			// Adoption off: the pre-installed CRD is refused, by name, with how to adopt it.
			if crd, err := crds.Get(ctx, crdName, metav1.GetOptions{}); err == nil && crd.GetLabels()[namespaces.LabelOperator] == "" {
				refused, _ := apply.DryRun(ctx, plan, refusing)
				for _, r := range refused {
					if r.Identity.Name != crdName || r.Identity.Resource != "customresourcedefinitions" {
						continue
					}
					msg := fmt.Sprint(r.Err)
					refusedByName = true
					if r.Status != apply.StatusFailed || !strings.Contains(msg, crdName) || !strings.Contains(msg, "--adopt-from") || !strings.Contains(msg, "operators[].adopt") {
						t.Errorf("adoption off: %s %s: %s %q, want refused by name with how to adopt it", r.Action, r.Identity, r.Status, msg)
					}
				}
			}
			// Ask the servers about every entry first, then apply.
			dry, _ := apply.DryRun(ctx, plan, targets)
			for _, r := range dry {
				if r.Status == apply.StatusFailed {
					t.Errorf("%s %s %s: %v", r.Action, r.Cluster, r.Identity, r.Err)
					continue
				}
				accepted++
			}
			checkPlanned(t, plan, mustApply(t, plan, targets), operator)
			plans = append(plans, plan)
		})
	}
	t.Run("pods", func(t *testing.T) { checkCAOPods(t, plans) })
	if crd, err := crds.Get(ctx, crdName, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if crd.GetUID() != crdBefore.GetUID() || crd.GetLabels()[namespaces.LabelOperator] != operator {
		t.Errorf("CRD %s: uid %s -> %s, labels %v: want adopted in place", crdName, crdBefore.GetUID(), crd.GetUID(), crd.GetLabels())
	}
	if !refusedByName {
		t.Errorf("no case planned the pre-installed CRD %s while it was unadopted: adoption off was not checked", crdName)
	}
	t.Logf("CAO corpus: %d of %d apply entries accepted by the servers in hosted mode", accepted, total)
	if accepted != total {
		t.Errorf("%d of %d apply entries refused", total-accepted, total)
	}
}

// checkCAOPods is the kubelet-less pod check of every Deployment the CAO corpus places on
// the management cluster, once every case is applied: the kubeconfig Secrets of the plans'
// guest identities are written as topolayer apply writes them (the guest API address the
// test's), and each Deployment's pod is its guest service account to kubectl, may do on the
// guest what the bindings of the corpus grant that account there, and is refused by the
// management server.
func checkCAOPods(t *testing.T, plans []*plans.Plan) {
	kubectl := kubectlBinary(t)
	guestCfg, mgmtCfg := hosted.Config(cluster.Guest), hosted.Config(cluster.Management)
	cfg, err := config.Load(filepath.Join("..", "examples", "hosted.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Topology.Hosted.GuestIdentity.Server = guestCfg.Host
	topo := mustTopology(t, cfg)
	configs := map[string]*rest.Config{cluster.Management: mgmtCfg, cluster.Guest: guestCfg}
	owner, err := topo.ResolveOwner(t.Context(), mgmtCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := topo.GuestIdentities(configs, corpus.CAO, owner, nil)
	if err != nil {
		t.Fatal(err)
	}
	mgmtCS, _ := clients(t, mgmtCfg)
	guestCS, _ := clients(t, guestCfg)
	checked := 0
	for _, plan := range plans {
		if _, err := w.Ensure(t.Context(), plan.GuestIdentities); err != nil {
			t.Fatal(err)
		}
		for _, id := range plan.GuestIdentities {
			for _, wl := range id.Workloads {
				if wl.Resource != "deployments" {
					continue
				}
				target, err := topo.Names().ToTarget(cluster.Management, wl)
				if err != nil {
					t.Fatal(err)
				}
				dep, err := mgmtCS.AppsV1().Deployments(target.Namespace).Get(t.Context(), target.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				t.Run(wl.Namespace+"/"+wl.Name, func(t *testing.T) {
					spec := dep.Spec.Template.Spec
					p := materialize(t, mgmtCS, mgmtCfg, target.Namespace, dep.Name+"-0", spec, spec.Containers[0].Name)
					if len(p.missing) > 0 {
						t.Logf("a kubelet would wait for %v (the corpus case does not write them)", p.missing)
					}
					if p.inCluster != "" {
						t.Errorf("the pod mounts a token of the management API server")
					}
					p.check(t, kubectl, podExpectation{user: id.User(), allowed: grantsOnGuest(t, guestCS, plans, id), refusedOn: mgmtCfg})
				})
				checked++
			}
		}
	}
	if checked == 0 {
		t.Error("no Deployment of the corpus acts as a guest identity")
	}
}

// grantsOnGuest returns `kubectl auth can-i` arguments for what the bindings the plans put
// on the guest grant a guest service account: one per rule of each role they refer to, as
// the guest holds it (a wildcard by one instance of it; non-resource rules are left out).
func grantsOnGuest(t *testing.T, guest kubernetes.Interface, plans []*plans.Plan, id plans.GuestServiceAccount) [][]string {
	t.Helper()
	var out [][]string
	for _, plan := range plans {
		for _, e := range plan.Entries {
			if e.Object == nil || e.Target.Cluster != cluster.Guest || (e.Source.Resource != "rolebindings" && e.Source.Resource != "clusterrolebindings") {
				continue
			}
			var b rbacv1.RoleBinding // a ClusterRoleBinding has the same subjects and roleRef
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.Object.Object, &b); err != nil {
				t.Fatalf("%s: %v", e.Source, err)
			}
			if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == rbacv1.ServiceAccountKind && s.Name == id.Name && cmp.Or(s.Namespace, b.Namespace) == id.Namespace
			}) {
				continue
			}
			var rules []rbacv1.PolicyRule
			if b.RoleRef.Kind == "ClusterRole" {
				r, err := guest.RbacV1().ClusterRoles().Get(t.Context(), b.RoleRef.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("%s refers to ClusterRole %s: %v", e.Source, b.RoleRef.Name, err)
				}
				rules = r.Rules
			} else {
				r, err := guest.RbacV1().Roles(b.Namespace).Get(t.Context(), b.RoleRef.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("%s refers to Role %s/%s: %v", e.Source, b.Namespace, b.RoleRef.Name, err)
				}
				rules = r.Rules
			}
			scope := []string{"-A"}
			if b.Namespace != "" {
				scope = []string{"-n", b.Namespace}
			}
			for _, r := range rules {
				if len(r.Verbs) == 0 || len(r.Resources) == 0 || len(r.APIGroups) == 0 {
					continue // a non-resource rule
				}
				// A wildcard is asked for by one instance of it: cluster-admin (what CAO binds
				// its operands' accounts to) may get configmaps.
				verb, group, resource := r.Verbs[0], r.APIGroups[0], r.Resources[0]
				if verb == "*" {
					verb = "get"
				}
				if group == "*" {
					group = ""
				}
				if resource == "*" {
					resource = "configmaps"
				}
				resource, sub, _ := strings.Cut(resource, "/")
				if group != "" {
					resource += "." + group
				}
				if len(r.ResourceNames) > 0 {
					resource += "/" + r.ResourceNames[0]
				}
				args := append([]string{verb, resource}, scope...)
				if sub != "" {
					args = append(args, "--subresource", sub)
				}
				out = append(out, args)
			}
		}
	}
	return out
}

// withImages returns ms with an image filled into every Deployment container that has none,
// as the operator's environment (its image variables) would, in each body and in the object
// parsed from it; nothing else changes.
func withImages(t *testing.T, ms []contract.Mutation) []contract.Mutation {
	t.Helper()
	out := make([]contract.Mutation, len(ms))
	for i, m := range ms {
		out[i] = m
		if m.Metadata.ResourceType.Resource != "deployments" || len(m.Body) == 0 {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal(m.Body, &obj); err != nil {
			t.Fatalf("%s: %v", m.Identity(), err)
		}
		for _, field := range []string{"initContainers", "containers"} {
			containers, found, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", field)
			if !found {
				continue
			}
			for j := range containers {
				if ct, ok := containers[j].(map[string]any); ok && (ct["image"] == nil || ct["image"] == "") {
					ct["image"] = "registry.example/" + m.Metadata.Name + ":e2e"
				}
			}
			if err := unstructured.SetNestedSlice(obj, containers, "spec", "template", "spec", field); err != nil {
				t.Fatal(err)
			}
		}
		body, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out[i].Body = body
		out[i].Object = nil // what translation reads: parsed again below, with the images
	}
	if err := contract.ParseObjects(&contract.OutputDir{Mutations: out}, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// subset reports whether every field of want is in got with the same value; a list in want
// is a subset of got's when each of its elements is a subset of some element of got's. An
// empty string or null in want matches anything: the server defaults unset fields (a
// roleRef's apiGroup, for one).
func subset(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return true
	case string:
		return w == "" || w == got
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !subset(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		for _, v := range w {
			if !slices.ContainsFunc(g, func(e any) bool { return subset(v, e) }) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(normalizeNumber(want), normalizeNumber(got))
	}
}

// normalizeNumber makes YAML's and JSON's numbers comparable.
func normalizeNumber(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case float32:
		return float64(n)
	}
	return v
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// caoCase returns the CAO corpus case whose name ends in "/"+name, failing the test when
// the corpus has none.
func caoCase(t *testing.T, name string) corpus.Case {
	t.Helper()
	for _, c := range corpus.CAOCases(t) {
		if strings.HasSuffix(c.Name, "/"+name) {
			return c
		}
	}
	t.Fatalf("corpus case %s not found", name)
	return corpus.Case{}
}

// readCase reads what corpus case c expects the operator to write and the operator's
// output-resources declarations.
func readCase(t *testing.T, c corpus.Case) (*contract.OutputDir, *contract.OutputResources) {
	t.Helper()
	out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	declared, err := contract.ParseOutputResources(mustRead(t, c.OutputResources))
	if err != nil {
		t.Fatal(err)
	}
	return out, declared
}

// checkPlanned checks that every object the plan creates, updates or applies is at its
// planned location with its standalone identity and operator label, and that status writes
// reached the status.
func checkPlanned(t *testing.T, plan *plans.Plan, results []apply.EntryResult, operator string) {
	t.Helper()
	// An Event that repeats one an earlier case wrote is folded into it (or, in a plan that
	// changes nothing else, not counted): it has no object of its own.
	folded := map[int]bool{}
	for _, r := range results {
		folded[r.Index] = r.Identity.IsEvent() && r.Change != apply.ChangeCreate
	}
	for i, e := range plan.Entries {
		if e.Disposition != routing.Apply || e.Target.Identity.Name == "" || folded[i] {
			continue
		}
		id := e.Target.Identity
		_, dyn := clients(t, hosted.Config(e.Target.Cluster))
		obj, err := dyn.Resource(id.GroupVersionResource()).Namespace(id.Namespace).Get(t.Context(), id.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s %s on %s: %v", e.Action, id, e.Target.Cluster, err)
			continue
		}
		switch {
		case e.Action.IsStatus():
			var planned map[string]any
			if err := yaml.Unmarshal(contracttest.Bytes(t, e.Mutation), &planned); err != nil {
				t.Fatalf("%s %s: %v", e.Action, id, err)
			}
			// A condition that did not transition keeps the time it had (an earlier case
			// wrote it): only the stored time differs from the planned one.
			planned = apply.CarryTransitionTimes(&unstructured.Unstructured{Object: planned}, obj).Object
			if want, ok := planned["status"]; ok && !subset(want, obj.Object["status"]) {
				t.Errorf("%s %s: the server's status %v lacks the planned %v", e.Action, id, obj.Object["status"], want)
			}
		case e.Rule == plans.RuleGuestNamespace:
			// The guest had the namespace already (the environment's installation): it is
			// left as it is, not taken over.
		case e.Action == contract.ActionCreate || e.Action == contract.ActionUpdate || e.Action == contract.ActionApply:
			checkOwned(t, obj, e.Source, operator, ownedByHCP(e))
		}
	}
}

// TestApplyCAOCorpusStandalone applies the same cases as TestApplyCAOCorpus in standalone
// mode: every apply entry is accepted by the one server and every object lands unchanged,
// at its standalone namespace and name, with the planned fields. Standalone passthrough adds
// no marks (no annotations, no label) and so does not refuse unmarked objects.
func TestApplyCAOCorpusStandalone(t *testing.T) {
	if os.Getenv(corpus.EnvVar) == "" {
		t.Skipf("%s is not set", corpus.EnvVar)
	}
	const operator = corpus.CAO
	ctx := t.Context()
	cfg := standalone.Config(cluster.Single)
	cs, dyn := clients(t, cfg)

	// The environment: the operator's CR and the namespaces that a cluster has.
	authID := contract.Identity{Group: "operator.openshift.io", Version: "v1", Resource: "authentications", Name: "cluster"}
	auth := object(t, "apiVersion: operator.openshift.io/v1\nkind: Authentication\nmetadata: {name: cluster}\nspec: {managementState: Managed}\n")
	if _, err := dyn.Resource(authID.GroupVersionResource()).Create(ctx, auth, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, ns := range []string{"openshift-authentication-operator", "openshift-config-managed"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}

	standaloneCfg, err := config.Load(filepath.Join("..", "examples", "standalone.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	target, err := apply.NewClusterTarget(cluster.Single, cfg, apply.Options{Operator: operator})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]apply.Target{cluster.Single: target}
	var total, accepted int
	for _, c := range corpus.CAOCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out, declared := readCase(t, c)
			plan := mustPlan(t, standaloneCfg, operator, declared, withImages(t, out.Mutations)...)
			total += plan.Summary.Apply
			dry, _ := apply.DryRun(ctx, plan, targets)
			for _, r := range dry {
				if r.Status == apply.StatusFailed {
					t.Errorf("%s %s: %v", r.Action, r.Identity, r.Err)
					continue
				}
				accepted++
			}
			// An Event that repeats one an earlier case wrote is folded into it (or, in a
			// plan that changes nothing else, not counted): it has no object of its own.
			folded := map[int]bool{}
			for _, r := range mustApply(t, plan, targets) {
				folded[r.Index] = r.Identity.IsEvent() && r.Change != apply.ChangeCreate
			}
			// The last write of each object (and of its status) is what the server holds.
			last := map[string]int{}
			for i, e := range plan.Entries {
				last[fmt.Sprint(e.Source, e.Action.IsStatus())] = i
			}
			for i, e := range plan.Entries {
				if e.Disposition != routing.Apply || e.Source.Name == "" || e.Action == contract.ActionDelete || last[fmt.Sprint(e.Source, e.Action.IsStatus())] != i || folded[i] {
					continue
				}
				if e.Target.Identity != e.Source {
					t.Errorf("%s %s: placed at %s, want unchanged", e.Action, e.Source, e.Target.Identity)
				}
				id := e.Source
				obj, err := dyn.Resource(id.GroupVersionResource()).Namespace(id.Namespace).Get(ctx, id.Name, metav1.GetOptions{})
				if err != nil {
					t.Errorf("%s %s: %v", e.Action, id, err)
					continue
				}
				var planned map[string]any
				if err := yaml.Unmarshal(contracttest.Bytes(t, e.Mutation), &planned); err != nil {
					t.Fatal(err)
				}
				// Conditions that did not transition keep their stored time.
				planned = apply.CarryTransitionTimes(&unstructured.Unstructured{Object: planned}, obj).Object
				for k, want := range planned {
					if k == "metadata" || k == "apiVersion" || k == "kind" || (k == "status") != e.Action.IsStatus() {
						continue
					}
					if !subset(want, obj.Object[k]) {
						t.Errorf("%s %s: the server's %s lacks the planned fields:\nplanned %v\nserver  %v", e.Action, id, k, want, obj.Object[k])
					}
				}
				if !e.Action.IsStatus() && obj.GetLabels()[namespaces.LabelOperator] != "" {
					t.Errorf("%s %s: standalone passthrough added the label %s", e.Action, id, namespaces.LabelOperator)
				}
			}
		})
	}
	t.Logf("CAO corpus: %d of %d apply entries accepted by the server in standalone mode", accepted, total)
	if accepted != total {
		t.Errorf("%d of %d apply entries refused", total-accepted, total)
	}
}
