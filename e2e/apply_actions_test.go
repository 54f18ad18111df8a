package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
)

const e2eOperator = "e2e-operator"

// configMap is the body of a Management ConfigMap in the standalone namespace openshift-sample.
func configMap(name, data string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: openshift-sample\ndata:\n  %s\n", name, data)
}

// authentication is the body of an operator.openshift.io Authentication named name.
func authentication(name, rest string) string {
	return fmt.Sprintf("apiVersion: operator.openshift.io/v1\nkind: Authentication\nmetadata:\n  name: %s\n%s", name, rest)
}

// applyOne translates ms for the hosted environment, applies them, and returns the live
// target object of the last one (nil when it is gone) and its client.
func applyOne(t *testing.T, ms ...contract.Mutation) (*unstructured.Unstructured, dynamic.ResourceInterface, *plans.Plan) {
	t.Helper()
	plan := hostedPlan(t, e2eOperator, nil, ms...)
	mustApply(t, plan, hostedTargets(t, e2eOperator, nil))
	last := plan.Entries[len(plan.Entries)-1]
	_, dyn := clients(t, hosted.Config(last.Target.Cluster))
	id := last.Target.Identity
	ri := dyn.Resource(id.GroupVersionResource()).Namespace(id.Namespace)
	obj, err := ri.Get(t.Context(), id.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, ri, plan
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj, ri, plan
}

func data(t *testing.T, obj *unstructured.Unstructured, key string) string {
	t.Helper()
	v, _, _ := unstructured.NestedString(obj.Object, "data", key)
	return v
}

func TestApplyCreate(t *testing.T) {
	m := mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "openshift-sample", "apply-create", configMap("apply-create", "k: v"))
	obj, _, plan := applyOne(t, m)
	if got, want := obj.GetName(), "openshift-sample--apply-create"; got != want || obj.GetNamespace() != hosted.HostedControlPlane().Namespace {
		t.Errorf("object at %s/%s, want %s/%s", obj.GetNamespace(), got, hosted.HostedControlPlane().Namespace, want)
	}
	if data(t, obj, "k") != "v" {
		t.Errorf("data = %v", obj.Object["data"])
	}
	if targetOf(t, plan).Name != obj.GetName() {
		t.Errorf("the plan's target %s is not the object written", targetOf(t, plan))
	}
	checkOwned(t, obj, m.Identity(), e2eOperator, true)
}

func TestApplyUpdate(t *testing.T) {
	create := mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "openshift-sample", "apply-update", configMap("apply-update", "k: v1"))
	update := mutation(contract.ClassManagement, contract.ActionUpdate, "/v1/configmaps", "openshift-sample", "apply-update", configMap("apply-update", "k: v2"))
	before, _, _ := applyOne(t, create)
	obj, _, _ := applyOne(t, update)
	if data(t, obj, "k") != "v2" || obj.GetResourceVersion() == before.GetResourceVersion() {
		t.Errorf("after update: data %v, resourceVersion %s (was %s)", obj.Object["data"], obj.GetResourceVersion(), before.GetResourceVersion())
	}
	checkOwned(t, obj, update.Identity(), e2eOperator, true)
}

func TestApplyApply(t *testing.T) {
	m := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", "openshift-sample", "apply-apply", configMap("apply-apply", "k: v1"))
	m.Metadata.FieldManager = "e2e-manager"
	m.Options = []byte("fieldManager: e2e-manager\nforce: true\n")
	obj, _, _ := applyOne(t, m)
	if data(t, obj, "k") != "v1" {
		t.Errorf("data = %v", obj.Object["data"])
	}
	m.Body = []byte(configMap("apply-apply", "k: v2"))
	obj, _, _ = applyOne(t, m)
	if data(t, obj, "k") != "v2" {
		t.Errorf("data after the second apply = %v", obj.Object["data"])
	}
	managers := map[string]string{}
	for _, f := range obj.GetManagedFields() {
		managers[f.Manager] = string(f.Operation)
	}
	if managers["e2e-manager"] != string(metav1.ManagedFieldsOperationApply) {
		t.Errorf("managedFields %v: want e2e-manager to have applied", managers)
	}
	checkOwned(t, obj, m.Identity(), e2eOperator, true)
}

// shadowAuthentication creates the shadow Authentication name through the plan (a Create of
// the cluster-scoped operator.openshift.io authentication).
func shadowAuthentication(t *testing.T, name string) contract.Mutation {
	t.Helper()
	m := mutation(contract.ClassManagement, contract.ActionCreate, "operator.openshift.io/v1/authentications", "", name,
		authentication(name, "spec:\n  managementState: Managed\n"))
	obj, _, _ := applyOne(t, m)
	if obj.GetAPIVersion() != shadowOperatorV1.String() {
		t.Fatalf("the authentication landed as %s, want the shadow %s", obj.GetAPIVersion(), shadowOperatorV1)
	}
	checkOwned(t, obj, m.Identity(), e2eOperator, true)
	return m
}

func TestApplyUpdateStatus(t *testing.T) {
	shadowAuthentication(t, "apply-updatestatus")
	m := mutation(contract.ClassManagement, contract.ActionUpdateStatus, "operator.openshift.io/v1/authentications", "", "apply-updatestatus",
		authentication("apply-updatestatus", "spec:\n  managementState: Managed\nstatus:\n  readyReplicas: 2\n"))
	obj, _, _ := applyOne(t, m)
	if got, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); got != 2 {
		t.Errorf("status.readyReplicas = %d, want 2 (status %v)", got, obj.Object["status"])
	}
}

func TestApplyApplyStatus(t *testing.T) {
	shadowAuthentication(t, "apply-applystatus")
	m := mutation(contract.ClassManagement, contract.ActionApplyStatus, "operator.openshift.io/v1/authentications", "", "apply-applystatus",
		authentication("apply-applystatus", "status:\n  readyReplicas: 3\n  conditions:\n  - {type: OAuthServerAvailable, status: \"True\", lastTransitionTime: \"2026-01-02T03:04:05Z\", reason: AsExpected}\n"))
	m.Metadata.FieldManager = "e2e-status"
	m.Options = []byte("fieldManager: e2e-status\nforce: true\n")
	obj, _, _ := applyOne(t, m)
	if got, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); got != 3 {
		t.Errorf("status.readyReplicas = %d, want 3", got)
	}
	if conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions"); len(conds) != 1 {
		t.Errorf("status.conditions = %v", conds)
	}
	var applied bool
	for _, f := range obj.GetManagedFields() {
		applied = applied || (f.Manager == "e2e-status" && f.Subresource == "status" && f.Operation == metav1.ManagedFieldsOperationApply)
	}
	if !applied {
		t.Errorf("no status apply by e2e-status in managedFields")
	}
}

func TestApplyPatch(t *testing.T) {
	create := mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "openshift-sample", "apply-patch", configMap("apply-patch", "a: \"1\"\n  b: \"2\""))
	applyOne(t, create)
	patch := func(pt, body string) contract.Mutation {
		m := mutation(contract.ClassManagement, contract.ActionPatch, "/v1/configmaps", "openshift-sample", "apply-patch", body)
		m.Metadata.PatchType = pt
		m.Metadata.FieldManager = "e2e-patch"
		return m
	}
	for _, tc := range []struct {
		name  string
		m     contract.Mutation
		check func(obj *unstructured.Unstructured) bool
	}{
		{"json", patch(contract.PatchTypeJSON, "- op: replace\n  path: /data/a\n  value: json\n- op: remove\n  path: /data/b\n"),
			func(o *unstructured.Unstructured) bool {
				_, found, _ := unstructured.NestedString(o.Object, "data", "b")
				return data(t, o, "a") == "json" && !found
			}},
		{"merge", patch(contract.PatchTypeMerge, `{"data":{"c":"merge"}}`),
			func(o *unstructured.Unstructured) bool {
				return data(t, o, "c") == "merge" && data(t, o, "a") == "json"
			}},
		{"strategic", patch(contract.PatchTypeStrategicMerge, `{"data":{"d":"strategic"},"metadata":{"labels":{"patched":"yes"}}}`),
			func(o *unstructured.Unstructured) bool {
				return data(t, o, "d") == "strategic" && o.GetLabels()["patched"] == "yes" && o.GetLabels()[namespaces.LabelOperator] == e2eOperator
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _, _ := applyOne(t, tc.m)
			if !tc.check(obj) {
				t.Errorf("after the %s patch: data %v, labels %v", tc.name, obj.Object["data"], obj.GetLabels())
			}
		})
	}
}

func TestApplyPatchStatus(t *testing.T) {
	shadowAuthentication(t, "apply-patchstatus")
	m := mutation(contract.ClassManagement, contract.ActionPatchStatus, "operator.openshift.io/v1/authentications", "", "apply-patchstatus",
		`{"status":{"readyReplicas":4}}`)
	m.Metadata.PatchType = contract.PatchTypeMerge
	obj, _, _ := applyOne(t, m)
	if got, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); got != 4 {
		t.Errorf("status.readyReplicas = %d, want 4", got)
	}
	m = mutation(contract.ClassManagement, contract.ActionPatchStatus, "operator.openshift.io/v1/authentications", "", "apply-patchstatus",
		"- op: replace\n  path: /status/readyReplicas\n  value: 5\n")
	m.Metadata.PatchType = contract.PatchTypeJSON
	obj, _, _ = applyOne(t, m)
	if got, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); got != 5 {
		t.Errorf("status.readyReplicas after the JSON patch = %d, want 5", got)
	}
}

func TestApplyDelete(t *testing.T) {
	create := mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "openshift-sample", "apply-delete", configMap("apply-delete", "k: v"))
	applyOne(t, create)
	del := mutation(contract.ClassManagement, contract.ActionDelete, "/v1/configmaps", "openshift-sample", "apply-delete", "apiVersion: v1\nkind: DeleteOptions\npropagationPolicy: Background\n")
	obj, _, plan := applyOne(t, del)
	if obj != nil {
		t.Fatalf("the object is still there: %v", obj.GetName())
	}
	// Deleting what is gone is not an error: it is skipped, and nothing is sent (an operator
	// that tries the delete on every run, as a recovered one does, writes nothing).
	counter := &mutatingCounter{}
	res := mustApply(t, plan, hostedTargets(t, e2eOperator, counter))
	if res[0].Status != apply.StatusSkipped {
		t.Errorf("second delete: %s, want %s", res[0].Status, apply.StatusSkipped)
	}
	if n := counter.n.Load(); n != 0 {
		t.Errorf("second delete: %d mutating requests sent, want 0", n)
	}
}

// TestApplyConflict pre-creates the target object of a Create labelled for another operator:
// applying the plan is refused with a ConflictError before any write, and the object is
// untouched.
func TestApplyConflict(t *testing.T) {
	m := mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "openshift-sample", "apply-conflict", configMap("apply-conflict", "k: ours"))
	plan := hostedPlan(t, e2eOperator, nil, m)
	id := targetOf(t, plan)
	theirs := object(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {%s: someone-else}\ndata: {k: theirs}\n", id.Name, id.Namespace, namespaces.LabelOperator))
	theirs.SetAnnotations(namespaces.SourceAnnotations(m.Identity()))
	_, dyn := clients(t, hosted.Config(cluster.Management))
	ri := dyn.Resource(id.GroupVersionResource()).Namespace(id.Namespace)
	before, err := ri.Create(t.Context(), theirs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// A second, harmless entry first in the plan: validation must stop it too.
	other := mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "openshift-sample", "apply-conflict-other", configMap("apply-conflict-other", "k: v"))
	ce := applyRefused(t, hostedPlan(t, e2eOperator, nil, other, m))
	if ce.LiveOperator != "someone-else" {
		t.Errorf("conflict reports operator %q", ce.LiveOperator)
	}
	after, err := ri.Get(t.Context(), id.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != before.GetResourceVersion() || data(t, after, "k") != "theirs" {
		t.Errorf("the object was touched: resourceVersion %s -> %s, data %v", before.GetResourceVersion(), after.GetResourceVersion(), after.Object["data"])
	}
	if _, err := ri.Get(t.Context(), "openshift-sample--apply-conflict-other", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the harmless entry was written before the conflict: err = %v", err)
	}
}

// TestApplyNoOp applies a plan twice: the second run sends no mutating request and skips
// every entry.
func TestApplyNoOp(t *testing.T) {
	apl := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", "openshift-sample", "apply-noop-apply", configMap("apply-noop-apply", "k: v"))
	apl.Metadata.FieldManager = "e2e-noop"
	plan := hostedPlan(t, e2eOperator, nil,
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "openshift-sample", "apply-noop-create", configMap("apply-noop-create", "k: v")),
		apl,
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/events", "openshift-sample-operator", "apply-noop.1", "apiVersion: v1\nkind: Event\nmetadata:\n  name: apply-noop.1\n  namespace: openshift-sample-operator\ninvolvedObject: {kind: ConfigMap, name: apply-noop-create, namespace: openshift-sample}\nreason: Created\n"),
		mutation(contract.ClassUserWorkload, contract.ActionCreate, "rbac.authorization.k8s.io/v1/clusterroles", "", "e2e-apply-noop", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: e2e-apply-noop\nrules:\n- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n"),
	)
	first := &mutatingCounter{}
	res, err := apply.ApplyPlan(t.Context(), plan, hostedTargets(t, e2eOperator, first))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != apply.StatusApplied {
			t.Errorf("first run: %s %s: %s", r.Action, r.Identity, r.Status)
		}
	}
	second := &mutatingCounter{}
	res, err = apply.ApplyPlan(t.Context(), plan, hostedTargets(t, e2eOperator, second))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != apply.StatusSkipped {
			t.Errorf("second run: %s %s: %s, want skipped", r.Action, r.Identity, r.Status)
		}
	}
	t.Logf("mutating requests: first run %d, second run %d", first.n.Load(), second.n.Load())
	if first.n.Load() != int64(len(res)) {
		t.Errorf("first run sent %d mutating requests for %d entries", first.n.Load(), len(res))
	}
	if n := second.n.Load(); n != 0 {
		t.Errorf("second run sent %d mutating requests, want 0", n)
	}
}

// TestApplyGuestNamespaceConflict: a plan that writes a guest Namespace that is already
// there, and objects in it, one of them someone else's. The objects are asked before the
// first write (the Namespace makes nothing they would wait for), so the conflict stops the
// whole plan: nothing is written on either cluster.
func TestApplyGuestNamespaceConflict(t *testing.T) {
	const ns = "e2e-guest-conflict"
	_, dyn := clients(t, hosted.Config(cluster.Guest))
	// An earlier run wrote the Namespace: it is the operator's own.
	namespace := mutation(contract.ClassUserWorkload, contract.ActionApply, "/v1/namespaces", "", ns, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n")
	mustApply(t, hostedPlan(t, e2eOperator, nil, namespace), hostedTargets(t, e2eOperator, nil))
	body := func(name, data string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  %s\n", name, ns, data)
	}
	theirs := mutation(contract.ClassUserWorkload, contract.ActionApply, "/v1/configmaps", ns, "theirs", body("theirs", "k: ours"))
	live := object(t, body("theirs", "k: theirs"))
	live.SetLabels(map[string]string{namespaces.LabelOperator: "someone-else"})
	live.SetAnnotations(namespaces.SourceAnnotations(theirs.Identity()))
	ri := dyn.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns)
	before, err := ri.Create(t.Context(), live, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan := hostedPlan(t, e2eOperator, nil,
		namespace,
		mutation(contract.ClassUserWorkload, contract.ActionCreate, "/v1/configmaps", ns, "first", body("first", "k: v")),
		theirs,
		mutation(contract.ClassUserWorkload, contract.ActionCreate, "/v1/configmaps", ns, "last", body("last", "k: v")),
	)
	applyRefused(t, plan)
	after, err := ri.Get(t.Context(), "theirs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("their object was touched")
	}
	if _, err := ri.Get(t.Context(), "first", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the entry before the conflict was written: err = %v", err)
	}
}

// applyRefused applies plan on the hosted targets and checks that validation refuses it
// with a *apply.ConflictError before any write: the error says nothing was written, no
// mutating request is sent and no entry is applied. It returns the conflict.
func applyRefused(t *testing.T, plan *plans.Plan) *apply.ConflictError {
	t.Helper()
	counter := &mutatingCounter{}
	res, err := apply.ApplyPlan(t.Context(), plan, hostedTargets(t, e2eOperator, counter))
	var ce *apply.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *ConflictError", err)
	}
	t.Logf("refused: %v", err)
	if !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("err = %v, want it to say nothing was written", err)
	}
	if n := counter.n.Load(); n != 0 {
		t.Errorf("%d mutating requests sent, want 0", n)
	}
	for _, r := range res {
		if r.Status == apply.StatusApplied {
			t.Errorf("%s was applied", r.Identity)
		}
	}
	return ce
}
