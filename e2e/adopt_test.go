package e2e

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
)

// residentManager is the field manager of the resident operator whose objects are adopted.
const residentManager = "authentication-operator"

// residentCreate creates the target object of every apply entry of plan as a resident
// operator would, by server-side apply with its field manager and without topolayer's marks;
// the object's data is data. It returns the objects by name and their client.
func residentCreate(t *testing.T, plan *plans.Plan, data map[string]any) (map[string]*unstructured.Unstructured, dynamic.ResourceInterface) {
	t.Helper()
	_, dyn := clients(t, hosted.Config(cluster.Management))
	var ri dynamic.ResourceInterface
	out := map[string]*unstructured.Unstructured{}
	for _, e := range plan.Entries {
		id := e.Target.Identity
		ri = dyn.Resource(id.GroupVersionResource()).Namespace(id.Namespace)
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
		o.SetName(id.Name)
		o.SetNamespace(id.Namespace)
		o.SetLabels(map[string]string{"app": "resident"})
		created, err := ri.Apply(t.Context(), id.Name, o, metav1.ApplyOptions{FieldManager: residentManager, Force: true})
		if err != nil {
			t.Fatalf("resident apply of %s: %v", id, err)
		}
		out[id.Name] = created
	}
	return out, ri
}

// TestApplyAdopt takes over objects a resident operator created by server-side apply: with
// adoption, every object keeps its uid, gains topolayer's marks, and no field topolayer
// applies is left owned by the resident manager; a second apply writes nothing. Without
// adoption, the refusal names the object and the way to adopt it; an object marked by
// another operator stays refused with adoption on.
func TestApplyAdopt(t *testing.T) {
	suffix := uniqueSuffix(t)
	apl := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", "openshift-sample", "adopt-apply-"+suffix, configMap("adopt-apply-"+suffix, "k: ours"))
	upd := mutation(contract.ClassManagement, contract.ActionUpdate, "/v1/configmaps", "openshift-sample", "adopt-update-"+suffix, configMap("adopt-update-"+suffix, "k: ours"))
	plan := hostedPlan(t, e2eOperator, nil, apl, upd)
	before, ri := residentCreate(t, plan, map[string]any{"k": "theirs"})

	// Adoption off: refused, nothing written, and the error says how to adopt.
	counter := &mutatingCounter{}
	_, err := apply.ApplyPlan(t.Context(), plan, hostedTargets(t, e2eOperator, counter))
	var ce *apply.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("without adoption: err = %v, want a *ConflictError", err)
	}
	for _, want := range []string{ce.Identity.Name, "--adopt-from", "operators[].adopt"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if n := counter.n.Load(); n != 0 {
		t.Errorf("without adoption: %d mutating requests, want 0", n)
	}

	// Adoption on: adopted in place.
	counter = &mutatingCounter{}
	log := &countingLog{}
	adopting := hostedTargetsAdopting(t, e2eOperator, counter, log, &apply.Adoption{FieldManagers: []string{residentManager}})
	dry, err := apply.DryRun(t.Context(), plan, adopting)
	if err != nil {
		t.Fatalf("dry-run with adoption: %v", err)
	}
	for _, r := range dry {
		if r.Change != apply.ChangeAdopt {
			t.Errorf("dry-run of %s: change %q, want %q", r.Identity, r.Change, apply.ChangeAdopt)
		}
	}
	if n := counter.n.Load(); n != 0 {
		t.Errorf("dry-run: %d mutating requests, want 0", n)
	}
	log.record(true)
	res := mustApply(t, plan, adopting)
	sent, _ := withoutDiscovery(log.requests())
	log.record(false)
	for _, r := range res {
		if r.Status != apply.StatusApplied || r.Change != apply.ChangeAdopt {
			t.Errorf("%s: %s %s, want applied adopt", r.Identity, r.Status, r.Change)
		}
		if len(r.Intermediate) != 1 || r.Intermediate[0] == r.Object.GetResourceVersion() {
			t.Errorf("%s: intermediate resourceVersions %v, final %s: want the managedFields patch's", r.Identity, r.Intermediate, r.Object.GetResourceVersion())
		}
	}
	// Per adopted object: the read, the dry-run, the managedFields patch, the write.
	if len(sent) != 4*len(res) {
		t.Errorf("adoption sent %d requests, want %d: %v", len(sent), 4*len(res), sent)
	}
	t.Logf("adoption of %d objects: %v", len(res), byMethod(sent))
	// One managedFields patch and one write per adopted object.
	if n, want := counter.n.Load(), int64(2*len(res)); n != want {
		t.Errorf("adoption: %d mutating requests, want %d", n, want)
	}
	t.Logf("adoption of %d objects: %d mutating requests", len(res), counter.n.Load())
	for _, e := range plan.Entries {
		id := e.Target.Identity
		after, err := ri.Get(t.Context(), id.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.GetUID() != before[id.Name].GetUID() {
			t.Errorf("%s: uid %s -> %s: the object was recreated", id, before[id.Name].GetUID(), after.GetUID())
		}
		if got := after.GetLabels()[namespaces.LabelOperator]; got != e2eOperator {
			t.Errorf("%s: operator label %q", id, got)
		}
		if data(t, after, "k") != "ours" {
			t.Errorf("%s: data %v", id, after.Object["data"])
		}
		for _, mf := range after.GetManagedFields() {
			if mf.Manager == residentManager {
				t.Errorf("%s: %s still owns %s (%s)", id, residentManager, mf.FieldsV1.Raw, mf.Operation)
			}
		}
		if !ownsField(after, apply.DefaultFieldManager, `"f:k"`) {
			t.Errorf("%s: %s owns no data.k: %v", id, apply.DefaultFieldManager, after.GetManagedFields())
		}
	}

	// Adopted once: the next apply is a no-op.
	counter.n.Store(0)
	for _, r := range mustApply(t, plan, adopting) {
		if r.Status != apply.StatusSkipped {
			t.Errorf("second apply of %s: %s %s, want skipped", r.Identity, r.Status, r.Change)
		}
	}
	if n := counter.n.Load(); n != 0 {
		t.Errorf("second apply: %d mutating requests, want 0", n)
	}

	// Another operator's object stays refused with adoption on.
	other := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", "openshift-sample", "adopt-other-"+suffix, configMap("adopt-other-"+suffix, "k: ours"))
	otherPlan := hostedPlan(t, e2eOperator, nil, other)
	id := targetOf(t, otherPlan)
	theirs := object(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {%s: someone-else}\ndata: {k: theirs}\n", id.Name, id.Namespace, namespaces.LabelOperator))
	if _, err := ri.Create(t.Context(), theirs, metav1.CreateOptions{FieldManager: residentManager}); err != nil {
		t.Fatal(err)
	}
	if _, err := apply.ApplyPlan(t.Context(), otherPlan, adopting); !errors.As(err, &ce) || ce.LiveOperator != "someone-else" {
		t.Errorf("another operator's object with adoption: err = %v, want its conflict", err)
	}
}

// ownsField reports whether manager has a managedFields entry whose fields mention field.
func ownsField(obj *unstructured.Unstructured, manager, field string) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager && mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), field) {
			return true
		}
	}
	return false
}

// TestApplyAdoptStandalone adopts a resident operator's object on a standalone cluster, whose
// topology adds no marks to bodies: the adoption adds the operator label, and the label stays
// on the next writes, so the object is adopted once and the next apply writes nothing.
func TestApplyAdoptStandalone(t *testing.T) {
	name := "adopt-standalone-" + uniqueSuffix(t)
	ns := newNamespace(t, standalone.Config(cluster.Single))
	body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  k: ours\n", name, ns)
	m := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", ns, name, body)
	cfg, err := config.Load(filepath.Join("..", "examples", "standalone.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plan := mustPlan(t, cfg, e2eOperator, nil, m)
	_, dyn := clients(t, standalone.Config(cluster.Single))
	ri := dyn.Resource(m.Identity().GroupVersionResource()).Namespace(ns)
	resident := object(t, strings.Replace(body, "k: ours", "k: theirs", 1))
	before, err := ri.Apply(t.Context(), name, resident, metav1.ApplyOptions{FieldManager: residentManager, Force: true})
	if err != nil {
		t.Fatal(err)
	}

	counter := &mutatingCounter{}
	target, err := apply.NewClusterTarget(cluster.Single, counter.wrap(standalone.Config(cluster.Single)),
		apply.Options{Operator: e2eOperator, Adopt: &apply.Adoption{FieldManagers: []string{residentManager}}})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]apply.Target{cluster.Single: target}
	res := mustApply(t, plan, targets)
	if res[0].Change != apply.ChangeAdopt {
		t.Errorf("first apply: %s %s, want adopt", res[0].Status, res[0].Change)
	}
	after, err := ri.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != before.GetUID() || after.GetLabels()[namespaces.LabelOperator] != e2eOperator || data(t, after, "k") != "ours" {
		t.Errorf("adopted: uid %s -> %s, labels %v, data %v", before.GetUID(), after.GetUID(), after.GetLabels(), after.Object["data"])
	}
	for i := range 2 {
		counter.n.Store(0)
		res = mustApply(t, plan, targets)
		if res[0].Status != apply.StatusSkipped || counter.n.Load() != 0 {
			t.Errorf("apply %d after the adoption: %s %s, %d mutating requests, want skipped and 0", i+2, res[0].Status, res[0].Change, counter.n.Load())
		}
	}
}
