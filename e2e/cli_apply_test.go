package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

const cliOperator = "sample-operator"

// cliBinary builds topolayer and checks that it has the apply command.
func cliBinary(t *testing.T) string {
	t.Helper()
	bin := binary(t, "topolayer")
	if out, err := exec.Command(bin, "apply", "--help").CombinedOutput(); err != nil || !strings.Contains(string(out), "--management-kubeconfig") {
		t.Fatalf("topolayer apply --help: %v\n%s\n(is NewCmdApply registered in cmd/topolayer/root.go?)", err, out)
	}
	return bin
}

// cliRun runs the topolayer binary and returns its stdout, stderr and error.
func cliRun(t *testing.T, bin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// uniqueSuffix returns a random lower-case hex string, for object names of this test only.
func uniqueSuffix(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// cliFixture is a small output directory of valid objects, with names of its own, and the
// kubeconfigs of the hosted environment.
type cliFixture struct {
	config    string   // the topology config file; default examples/hosted.yaml
	operator  string   // default cliOperator
	extra     []string // more flags for every command
	from      string   // the output dir
	kubeDir   string   // management.kubeconfig and guest.kubeconfig
	mutations []contract.Mutation
	plan      *plans.Plan // its hosted plan, for the target identities
}

// newCLIFixture writes an output dir of a ConfigMap and a Secret (Management, in a
// namespace of the test's own) and, unless managementOnly, a ClusterRole (UserWorkload).
func newCLIFixture(t *testing.T, managementOnly bool) *cliFixture {
	t.Helper()
	sfx := uniqueSuffix(t)
	ns := "openshift-e2e-cli-" + sfx
	ms := []contract.Mutation{
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", ns, "settings",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: "+ns+"}\ndata: {replicas: \"2\"}\n"),
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/secrets", ns, "token",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: "+ns+"}\ntype: Opaque\ndata: {token: c2VjcmV0}\n"),
	}
	if !managementOnly {
		ms = append(ms, mutation(contract.ClassUserWorkload, contract.ActionCreate, "rbac.authorization.k8s.io/v1/clusterroles", "", "e2e-cli-"+sfx,
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: e2e-cli-"+sfx+"}\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n"))
	}
	from := filepath.Join(t.TempDir(), "out")
	if err := contract.WriteOutputDir(from, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeDir := writeKubeconfigs(t, hosted)
	return &cliFixture{from: from, kubeDir: kubeDir, mutations: ms, plan: hostedPlan(t, cliOperator, nil, ms...)}
}

// args returns the flags naming the fixture's outputs and the hosted clusters.
func (f *cliFixture) args(cmd string, extra ...string) []string {
	config, operator := cmp.Or(f.config, filepath.Join("..", "examples", "hosted.yaml")), cmp.Or(f.operator, cliOperator)
	args := append([]string{cmd, "--config", config, "--from", f.from, "--operator", operator}, hostedKubeconfigFlags(f.kubeDir)...)
	return append(append(args, f.extra...), extra...)
}

// objects reads the live object of every apply entry of the plan, keyed by cluster and
// target identity, failing the test when one is missing.
func (f *cliFixture) objects(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	_, mgmt := clients(t, hosted.Config(cluster.Management))
	_, guest := clients(t, hosted.Config(cluster.Guest))
	out := map[string]*unstructured.Unstructured{}
	for _, e := range f.plan.Entries {
		if e.Mutation == nil {
			continue
		}
		dyn := mgmt
		if e.Target.Cluster == cluster.Guest {
			dyn = guest
		}
		obj, err := resourceOf(dyn, e.Target.Identity).Get(t.Context(), e.Target.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s %s: %v", e.Target.Cluster, e.Target.Identity, err)
		}
		out[e.Target.Cluster+":"+e.Target.Identity.String()] = obj
	}
	return out
}

func resourceOf(dyn *dynamic.DynamicClient, id contract.Identity) dynamic.ResourceInterface {
	if id.Namespace != "" {
		return dyn.Resource(id.GroupVersionResource()).Namespace(id.Namespace)
	}
	return dyn.Resource(id.GroupVersionResource())
}

// cliApplyResult is one entry of `topolayer apply -o json`.
type cliApplyResult struct {
	Source, Action, Cluster, Target, Status, Change, Error string
}

func parseApply(t *testing.T, stdout string) []cliApplyResult {
	t.Helper()
	var res []cliApplyResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("apply -o json: %v\n%s", err, stdout)
	}
	return res
}

// TestCLIApplyHosted runs `topolayer apply` on the hosted environment: the objects land at
// their planned locations, and a second apply skips every entry.
func TestCLIApplyHosted(t *testing.T) {
	bin := cliBinary(t)
	f := newCLIFixture(t, false)

	stdout, stderr, err := cliRun(t, bin, f.args("apply", "-o", "json")...)
	if err != nil {
		t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
	}
	res := parseApply(t, stdout)
	if len(res) != len(f.mutations) {
		t.Fatalf("%d results for %d mutations:\n%s", len(res), len(f.mutations), stdout)
	}
	for _, r := range res {
		if r.Status != "applied" || r.Change != "create" {
			t.Errorf("%s %s: %s %s %s", r.Cluster, r.Target, r.Status, r.Change, r.Error)
		}
	}
	objs := f.objects(t)
	for _, e := range f.plan.Entries {
		obj := objs[e.Target.Cluster+":"+e.Target.Identity.String()]
		checkOwned(t, obj, e.Source, cliOperator, ownedByHCP(e))
	}

	stdout, stderr, err = cliRun(t, bin, f.args("apply")...)
	if err != nil {
		t.Fatalf("apply again: %v\n%s%s", err, stdout, stderr)
	}
	t.Logf("second apply:\n%s", stdout)
	if !strings.Contains(stdout, "0 applied, 3 skipped, 0 failed, 0 not run") {
		t.Errorf("the second apply did not skip every entry:\n%s", stdout)
	}
	for key, obj := range f.objects(t) {
		if obj.GetResourceVersion() != objs[key].GetResourceVersion() {
			t.Errorf("%s: resourceVersion %s -> %s after a no-op apply", key, objs[key].GetResourceVersion(), obj.GetResourceVersion())
		}
	}
}

// cliLive is one entry of the live results of `topolayer plan -o json`.
type cliLive struct {
	Cluster, Target, Result, Reason, Diff string
}

func livePlan(t *testing.T, bin string, f *cliFixture) map[string]cliLive {
	t.Helper()
	stdout, stderr, err := cliRun(t, bin, f.args("plan", "--diff", "-o", "json")...)
	if err != nil {
		t.Fatalf("plan --diff: %v\n%s%s", err, stdout, stderr)
	}
	var doc struct{ Live []cliLive }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("plan -o json: %v\n%s", err, stdout)
	}
	out := map[string]cliLive{}
	for _, l := range doc.Live {
		out[l.Cluster+":"+l.Target] = l
	}
	// The plan's entries to write: the mutations, and those its rules add (a guest
	// identity's service accounts and namespace).
	want := 0
	for _, e := range f.plan.Entries {
		if e.Mutation != nil {
			want++
		}
	}
	if len(out) != want {
		t.Fatalf("%d live entries for %d planned writes of %d mutations:\n%s", len(out), want, len(f.mutations), stdout)
	}
	return out
}

func resourceVersions(objs map[string]*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for k, o := range objs {
		out[k] = o.GetResourceVersion()
	}
	return out
}

// TestCLIPlanLiveDryRun: `plan --diff` on the hosted environment says create before apply,
// unchanged after, and change (with a diff) for exactly the object edited since; the
// dry-runs write nothing.
func TestCLIPlanLiveDryRun(t *testing.T) {
	bin := cliBinary(t)
	f := newCLIFixture(t, false)

	for target, l := range livePlan(t, bin, f) {
		if l.Result != "create" || !strings.Contains(l.Diff, "+++ planned/") {
			t.Errorf("before apply: %s: %s %s, diff:\n%s", target, l.Result, l.Reason, l.Diff)
		}
	}
	if stdout, stderr, err := cliRun(t, bin, f.args("apply")...); err != nil {
		t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
	}
	objs := f.objects(t)
	for target, l := range livePlan(t, bin, f) {
		if l.Result != "unchanged" || l.Diff != "" {
			t.Errorf("after apply: %s: %s %s, diff:\n%s", target, l.Result, l.Reason, l.Diff)
		}
	}

	// Edit the ConfigMap as a user would.
	var cmKey string
	for k, o := range objs {
		if o.GetKind() == "ConfigMap" {
			cmKey = k
		}
	}
	cm := objs[cmKey].DeepCopy()
	if err := unstructured.SetNestedField(cm.Object, "7", "data", "replicas"); err != nil {
		t.Fatal(err)
	}
	_, mgmt := clients(t, hosted.Config(cluster.Management))
	if _, err := mgmt.Resource(cm.GroupVersionKind().GroupVersion().WithResource("configmaps")).Namespace(cm.GetNamespace()).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := resourceVersions(f.objects(t))

	for target, l := range livePlan(t, bin, f) {
		want := "unchanged"
		if strings.HasPrefix(target, cluster.Management+":configmaps/") { // the fixture's only ConfigMap
			want = "change"
		}
		if l.Result != want {
			t.Errorf("after the edit: %s: %s, want %s (%s)", target, l.Result, want, l.Reason)
		}
		if want == "change" && (!strings.Contains(l.Diff, `-  replicas: "7"`) || !strings.Contains(l.Diff, `+  replicas: "2"`)) {
			t.Errorf("after the edit: %s: diff:\n%s", target, l.Diff)
		}
		if want == "unchanged" && l.Diff != "" {
			t.Errorf("after the edit: %s unchanged with a diff:\n%s", target, l.Diff)
		}
	}
	stdout, stderr, err := cliRun(t, bin, f.args("plan", "--diff")...)
	if err != nil {
		t.Fatalf("plan --diff: %v\n%s%s", err, stdout, stderr)
	}
	t.Logf("plan --diff:\n%s", stdout)
	if !strings.Contains(stdout, "live dry-run: 0 create, 1 change, 2 unchanged, 0 delete, 0 fail") || !strings.Contains(stdout, "--- live/management:configmaps/") {
		t.Errorf("table output:\n%s", stdout)
	}
	if after := resourceVersions(f.objects(t)); !equalMaps(before, after) {
		t.Errorf("the dry-runs changed the objects: resourceVersions %v -> %v", before, after)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCLIApplyStandalone runs `topolayer apply --kubeconfig` on the standalone environment:
// the ConfigMap lands unchanged (same namespace and name), and the live dry-run of plan
// then finds it unchanged.
func TestCLIApplyStandalone(t *testing.T) {
	bin := cliBinary(t)
	cfg := standalone.Config(cluster.Single)
	ns := newNamespace(t, cfg)
	ms := []contract.Mutation{mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", ns, "settings",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: "+ns+"}\ndata: {replicas: \"2\"}\n")}
	from := filepath.Join(t.TempDir(), "out")
	if err := contract.WriteOutputDir(from, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeDir := writeKubeconfigs(t, standalone)
	args := func(cmd string, extra ...string) []string {
		return append([]string{cmd, "--config", filepath.Join("..", "examples", "standalone.yaml"), "--from", from,
			"--operator", cliOperator, "--kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Single)}, extra...)
	}
	stdout, stderr, err := cliRun(t, bin, args("apply", "-o", "json")...)
	if err != nil {
		t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
	}
	if res := parseApply(t, stdout); len(res) != 1 || res[0].Status != "applied" || res[0].Target != "configmaps/"+ns+"/settings" {
		t.Errorf("apply results:\n%s", stdout)
	}
	cs, _ := clients(t, cfg)
	got, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["replicas"] != "2" {
		t.Errorf("data = %v", got.Data)
	}
	stdout, stderr, err = cliRun(t, bin, args("plan", "--diff")...)
	if err != nil {
		t.Fatalf("plan --diff: %v\n%s%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "live dry-run: 0 create, 0 change, 1 unchanged, 0 delete, 0 fail") {
		t.Errorf("plan --diff after apply:\n%s", stdout)
	}
}

// TestCLIApplySignalFinishesEntry sends SIGTERM to `topolayer apply` while it writes a
// plan of many entries: it stops after the entry in flight, exits 143, reports how many
// entries it wrote (exactly those on the server) and which it did not run, and the same
// apply run again finishes the plan, skipping what the first one wrote.
func TestCLIApplySignalFinishesEntry(t *testing.T) {
	const n = 80
	bin := cliBinary(t)
	sfx := uniqueSuffix(t)
	ns := "openshift-e2e-sig-" + sfx
	var ms []contract.Mutation
	for i := range n {
		name := fmt.Sprintf("cm-%03d", i)
		ms = append(ms, mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", ns, name,
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: "+ns+"}\ndata: {k: v}\n"))
	}
	from := filepath.Join(t.TempDir(), "out")
	if err := contract.WriteOutputDir(from, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f := &cliFixture{from: from, kubeDir: writeKubeconfigs(t, hosted), mutations: ms, plan: hostedPlan(t, cliOperator, nil, ms...)}
	hcpNamespace := f.plan.Entries[0].Target.Namespace
	prefix := ns + "--"
	cs, _ := clients(t, hosted.Config(cluster.Management))
	onServer := func(ctx context.Context) (int, error) {
		list, err := cs.CoreV1().ConfigMaps(hcpNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		c := 0
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, prefix) {
				c++
			}
		}
		return c, nil
	}

	cmd := exec.CommandContext(t.Context(), bin, f.args("apply", "-o", "json")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Signal once the writes have begun.
	if err := poll(t.Context(), 5*time.Millisecond, 60*time.Second, func(ctx context.Context) (bool, error) {
		select {
		case err := <-exited:
			return false, fmt.Errorf("apply ended before the signal: %v\n%s%s", err, stdout.String(), stderr.String())
		default:
		}
		c, err := onServer(ctx)
		return c >= 3, err
	}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("apply did not stop within 10s of SIGTERM")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 143 {
		t.Fatalf("apply after SIGTERM: %v, want exit 143\n%s", err, stderr.String())
	}
	t.Logf("stderr: %s", strings.TrimSpace(stderr.String()))
	res := parseApply(t, stdout.String())
	applied, notRun := 0, 0
	for _, r := range res {
		switch r.Status {
		case string(apply.StatusApplied):
			applied++
		case string(apply.StatusNotRun):
			notRun++
		default:
			t.Errorf("%s: %s %s", r.Target, r.Status, r.Error)
		}
	}
	written, err := onServer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SIGTERM: %d of %d entries written, %d not run; %d on the server", applied, n, notRun, written)
	if applied != written || applied+notRun != n || notRun == 0 {
		t.Errorf("apply reports %d written and %d not run of %d; the server holds %d", applied, notRun, n, written)
	}
	if want := fmt.Sprintf("(%d written)", applied); !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "apply the same plan again") {
		t.Errorf("stderr does not say %q and how to finish:\n%s", want, stderr.String())
	}

	out, errOut, err := cliRun(t, bin, f.args("apply")...)
	if err != nil {
		t.Fatalf("apply again: %v\n%s", err, errOut)
	}
	if want := fmt.Sprintf("%d applied, %d skipped, 0 failed, 0 not run", notRun, applied); !strings.Contains(out, want) {
		t.Errorf("the second apply does not say %q:\n%s", want, lastLines(out, 3))
	}
	if c, err := onServer(t.Context()); err != nil || c != n {
		t.Errorf("after the second apply: %d of %d on the server (%v)", c, n, err)
	}
}

// lastLines returns the last k lines of s.
func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-k):], "\n")
}
