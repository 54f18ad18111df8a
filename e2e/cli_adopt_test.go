package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/namespaces"
)

// TestCLIAdopt runs the topolayer binary over objects a resident operator created (server-
// side apply by authentication-operator, no topolayer marks): plan and apply refuse them and
// say how to adopt; plan --adopt-from shows "adopt" (JSON and table); apply --adopt-from
// takes them over in place; the next apply skips every entry.
func TestCLIAdopt(t *testing.T) {
	bin := cliBinary(t)
	f := newCLIFixture(t, false)
	_, mgmt := clients(t, hosted.Config(cluster.Management))
	_, guest := clients(t, hosted.Config(cluster.Guest))
	uids := map[string]string{}
	for _, e := range f.plan.Entries {
		if e.Object == nil {
			t.Fatalf("%s: the plan entry has no object", e.Target.Identity)
		}
		resident := e.Object.DeepCopy()
		resident.SetLabels(nil)
		resident.SetAnnotations(nil)
		dyn := mgmt
		if e.Target.Cluster == cluster.Guest {
			dyn = guest
		}
		obj, err := resourceOf(dyn, e.Target.Identity).Apply(t.Context(), e.Target.Name, resident, metav1.ApplyOptions{FieldManager: residentManager, Force: true})
		if err != nil {
			t.Fatalf("resident apply of %s: %v", e.Target.Identity, err)
		}
		uids[e.Target.Cluster+":"+e.Target.Identity.String()] = string(obj.GetUID())
	}

	// Without adoption: refused, the way to adopt named.
	stdout, stderr, err := cliRun(t, bin, f.args("plan", "-o", "json")...)
	if err == nil {
		t.Errorf("plan without adoption succeeded:\n%s", stdout)
	}
	for _, l := range parseLive(t, stdout) {
		if l.Result != "fail" || !strings.Contains(l.Reason, "--adopt-from") || !strings.Contains(l.Reason, "operators[].adopt") {
			t.Errorf("plan without adoption: %s: %s %q, want a refusal that says how to adopt", l.Target, l.Result, l.Reason)
		}
	}
	stdout, stderr, err = cliRun(t, bin, f.args("apply")...)
	if err == nil || !strings.Contains(stdout+stderr, "--adopt-from MANAGER") {
		t.Errorf("apply without adoption: err %v, want a refusal that says how to adopt:\n%s%s", err, stdout, stderr)
	}

	// plan --adopt-from: adopt.
	adopt := []string{"--adopt-from", residentManager}
	stdout, stderr, err = cliRun(t, bin, f.args("plan", append([]string{"-o", "json"}, adopt...)...)...)
	if err != nil {
		t.Fatalf("plan --adopt-from: %v\n%s%s", err, stdout, stderr)
	}
	for _, l := range parseLive(t, stdout) {
		if l.Result != "adopt" {
			t.Errorf("plan --adopt-from: %s: %s %s, want adopt", l.Target, l.Result, l.Reason)
		}
	}
	stdout, stderr, err = cliRun(t, bin, f.args("plan", adopt...)...)
	if err != nil || !strings.Contains(stdout, "live dry-run: 0 create, 0 change, 3 adopt, 0 unchanged, 0 delete, 0 fail") {
		t.Errorf("plan --adopt-from table: err %v:\n%s%s", err, stdout, stderr)
	}

	// apply --adopt-from: adopted in place.
	stdout, stderr, err = cliRun(t, bin, f.args("apply", append([]string{"-o", "json"}, adopt...)...)...)
	if err != nil {
		t.Fatalf("apply --adopt-from: %v\n%s%s", err, stdout, stderr)
	}
	for _, r := range parseApply(t, stdout) {
		if r.Status != "applied" || r.Change != "adopt" {
			t.Errorf("apply --adopt-from: %s %s: %s %s %s", r.Cluster, r.Target, r.Status, r.Change, r.Error)
		}
	}
	for key, obj := range f.objects(t) {
		if string(obj.GetUID()) != uids[key] {
			t.Errorf("%s: uid %s -> %s: recreated", key, uids[key], obj.GetUID())
		}
		if obj.GetLabels()[namespaces.LabelOperator] != cliOperator {
			t.Errorf("%s: labels %v, want topolayer's operator label", key, obj.GetLabels())
		}
		for _, mf := range obj.GetManagedFields() {
			if mf.Manager == residentManager {
				t.Errorf("%s: %s still owns %s", key, residentManager, mf.FieldsV1.Raw)
			}
		}
	}
	stdout, stderr, err = cliRun(t, bin, f.args("apply", adopt...)...)
	if err != nil || !strings.Contains(stdout, "0 applied, 3 skipped, 0 failed, 0 not run") {
		t.Errorf("apply after adoption: err %v, want every entry skipped:\n%s%s", err, stdout, stderr)
	}
}

// parseLive reads the live entries of `topolayer plan -o json`.
func parseLive(t *testing.T, stdout string) []cliLive {
	t.Helper()
	var doc struct{ Live []cliLive }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("plan -o json: %v\n%s", err, stdout)
	}
	if len(doc.Live) == 0 {
		t.Fatalf("plan -o json: no live entries:\n%s", stdout)
	}
	return doc.Live
}
