package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/mom/manager"
)

// faultManagerOptions are what startFaultManager changes of startManager's setup.
type faultManagerOptions struct {
	// guest is the guest's client configuration; nil means the shared environment's.
	guest *rest.Config
	// workDir holds the runs' directories; "" means a temporary directory of the test's.
	workDir string
	// management is the management cluster's client configuration; nil means the shared
	// environment's.
	management *rest.Config
}

// startFaultManager is startManager with the guest's configuration and the work directory
// chosen by the test: faults need a guest behind a proxy, or a work directory on a
// filesystem the test fills.
func startFaultManager(t *testing.T, cfg *config.TopologyConfig, ops []manager.Operator, o faultManagerOptions) (*manager.Manager, *prometheus.Registry) {
	t.Helper()
	m, reg, err := startManagerWith(t, cfg, ops, o)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// runsWith counts op's finished runs with result, from topolayer_operator_runs_total.
func runsWith(t *testing.T, reg *prometheus.Registry, op, result string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "topolayer_operator_runs_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["operator"] == op && labels["result"] == result {
				n += s.GetCounter().GetValue()
			}
		}
	}
	return n
}

// waitLong polls cond every 100ms for up to timeout (not-found errors mean "not yet").
func waitLong(t *testing.T, what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	eventuallyEvery(t, what, 100*time.Millisecond, timeout, cond)
}

// setGuestValue creates or updates the ConfigMap openshift-config/name on the guest with
// data value=v.
func setGuestValue(t *testing.T, cs kubernetes.Interface, name, v string) {
	t.Helper()
	ensureNamespace(t, cs, "openshift-config")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openshift-config"}, Data: map[string]string{"value": v}}
	_, err := cs.CoreV1().ConfigMaps("openshift-config").Update(t.Context(), cm, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = cs.CoreV1().ConfigMaps("openshift-config").Create(t.Context(), cm, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// valueOf reads data.value of the ConfigMap namespace/name (not-found errors returned).
func valueOf(ctx context.Context, cs kubernetes.Interface, namespace, name string) (string, error) {
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return cm.Data["value"], nil
}

// pairOperator is the good behaviour of the operator the fault tests break: it reads the
// guest ConfigMap openshift-config/<trigger> and writes its value into two Management
// ConfigMaps, openshift-fault/a-<sfx> and openshift-fault/b-<sfx>: one plan of two entries,
// so that a partial plan would show. Its declarations are the InProcess runner's.
func pairOperator(op, trigger, sfx string) *runner.InProcess {
	cmID := func(ns, name string) contract.ExactResourceID {
		return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: ns, Name: name}
	}
	inputs := &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{ExactResources: []contract.ExactResourceID{cmID("openshift-config", trigger)}}}
	outputs := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
		cmID("openshift-fault", "a-"+sfx), cmID("openshift-fault", "b-"+sfx),
	}}}
	fn := func(ctx context.Context, req runner.Request) error {
		out, err := pairOutputs(req.InputDir, trigger, sfx)
		if err != nil {
			return err
		}
		return contract.WriteOutputDir(req.OutputDir, out, contract.WriteOptions{})
	}
	return &runner.InProcess{Name: op, Func: fn, Inputs: inputs, Outputs: outputs}
}

// pairOutputs computes pairOperator's outputs from an input directory.
func pairOutputs(inputDir, trigger, sfx string) (*contract.OutputDir, error) {
	value, err := inputValue(inputDir, trigger, "unset")
	if err != nil {
		return nil, fmt.Errorf("read the input dir: %w", err)
	}
	var ms []contract.Mutation
	for _, name := range []string{"a-" + sfx, "b-" + sfx} {
		ms = append(ms, valueConfigMap("openshift-fault", name, value))
	}
	return &contract.OutputDir{Mutations: ms}, nil
}

// switchRunner runs the good runner, or the faulty one while broken is set. Its
// declarations are always the good runner's: a fault changes what a run does, not what the
// operator declared.
type switchRunner struct {
	good   runner.Runner
	faulty runner.Runner
	broken atomic.Bool
}

var _ runner.Runner = (*switchRunner)(nil)

// Resources returns the good runner's declarations.
func (s *switchRunner) Resources(ctx context.Context) (*contract.InputResources, *contract.OutputResources, error) {
	return s.good.Resources(ctx)
}

// Run runs the faulty runner while broken, else the good one.
func (s *switchRunner) Run(ctx context.Context, req runner.Request) (*runner.Result, error) {
	if s.broken.Load() && s.faulty != nil {
		return s.faulty.Run(ctx, req)
	}
	return s.good.Run(ctx, req)
}

// shellOperator is an Exec operator whose apply-configuration is a shell script; the
// script sees the output directory as $5 (apply-configuration --input-dir I --output-dir O).
func shellOperator(op, script string, limits runner.Limits) *runner.Exec {
	return &runner.Exec{Name: op, Command: []string{"sh", "-c", script, op}, Limits: limits}
}

// corruptingOperator writes the good operator's outputs, then damages the second
// mutation's files with damage (given the output dir and the body and metadata paths).
func corruptingOperator(op, trigger, sfx string, damage func(outputDir, body, metadata string) error) *runner.InProcess {
	fn := func(ctx context.Context, req runner.Request) error {
		out, err := pairOutputs(req.InputDir, trigger, sfx)
		if err != nil {
			return err
		}
		if err := contract.WriteOutputDir(req.OutputDir, out, contract.WriteOptions{}); err != nil {
			return err
		}
		body, meta, _ := contract.MutationFiles(&out.Mutations[1])
		return damage(req.OutputDir, filepath.Join(req.OutputDir, string(out.Mutations[1].Class), body), filepath.Join(req.OutputDir, string(out.Mutations[1].Class), meta))
	}
	return &runner.InProcess{Name: op, Func: fn}
}

// fillDisk mounts a 512 KiB tmpfs at dir (which must exist and be empty) and fills it; it
// returns a function that frees the space. It skips the test where mounting is not allowed.
func fillDisk(t *testing.T, dir string) (free func()) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=512k"); err != nil {
		t.Skipf("a full disk needs a small tmpfs, and mounting one failed (%v): run as root with CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			break
		}
	}
	_ = f.Close()
	// Small files still fit in a page left by the filler's last partial write: a second
	// filler of single bytes takes those.
	for i := 0; ; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("filler-%d", i)), []byte{0}, 0o600); err != nil {
			break
		}
	}
	return func() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "filler") {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// faultCase is one way an operator (or its disk) fails.
type faultCase struct {
	name string
	// faulty builds the faulty runner of operator op (nil: the fault is not the operator's).
	faulty func(op, trigger, sfx string) runner.Runner
	// breakIt, when set, breaks something else than the operator, and returns the repair
	// (workDir is the manager's work directory; the operator's runs are under workDir/op).
	breakIt func(t *testing.T, workDir, op string) (repair func())
	// result, reason and message are what the status object and the event must say.
	result, reason, message string
}

// TestManagerOperatorFaults breaks one operator (or its disk) in each of the ways of
// faultCases while a healthy operator runs alongside, and checks: the healthy operator
// keeps converging; the broken one is reported (status object and event, with the reason)
// and retried with a growing backoff; its objects stay at their old state (nothing of a
// failed or rejected plan is written); once repaired, it converges to what a fresh run of
// the good operator writes for the current inputs.
func TestManagerOperatorFaults(t *testing.T) {
	released := make(chan struct{}) // ends the goroutines of the in-process hang case
	t.Cleanup(func() { close(released) })
	cases := []faultCase{
		{
			name: "crash (exit 1)",
			faulty: func(op, _, _ string) runner.Runner {
				return shellOperator(op, `echo "operator crashed: cannot continue" >&2; exit 1`, runner.Limits{Timeout: 10 * time.Second})
			},
			result: manager.ResultFailed, reason: "RunFailed", message: "exited with code 1: operator crashed: cannot continue",
		},
		{
			name: "panic (in-process)",
			faulty: func(op, _, _ string) runner.Runner {
				return &runner.InProcess{Name: op, Func: func(context.Context, runner.Request) error { panic("operator panicked: nil map") }}
			},
			result: manager.ResultFailed, reason: "RunFailed", message: "panic: operator panicked: nil map",
		},
		{
			name: "hang (process, timeout)",
			faulty: func(op, _, _ string) runner.Runner {
				return shellOperator(op, `sleep 600`, runner.Limits{Timeout: time.Second})
			},
			result: manager.ResultFailed, reason: "RunFailed", message: "killed after 1s",
		},
		{
			name: "hang (in-process, ignores its context)",
			faulty: func(op, _, _ string) runner.Runner {
				return &runner.InProcess{Name: op, Limits: runner.Limits{Timeout: time.Second}, Func: func(context.Context, runner.Request) error {
					<-released
					return nil
				}}
			},
			result: manager.ResultFailed, reason: "RunFailed", message: "timed out after 1s",
		},
		{
			name: "writes 1 GB",
			faulty: func(op, _, _ string) runner.Runner {
				return shellOperator(op, `mkdir -p "$5/Management" && head -c 1073741824 /dev/zero > "$5/Management/huge.yaml"`,
					runner.Limits{Timeout: time.Minute, OutputSize: 1 << 20})
			},
			result: manager.ResultFailed, reason: "RunFailed", message: "is over the limit of 1048576 bytes; removed",
		},
		{
			name: "malformed body",
			faulty: func(op, trigger, sfx string) runner.Runner {
				return corruptingOperator(op, trigger, sfx, func(_, body, _ string) error {
					return os.WriteFile(body, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [unclosed\n"), 0o644)
				})
			},
			result: manager.ResultRejected, reason: "OutputsRejected", message: "read the output dir",
		},
		{
			name: "malformed metadata naming ../",
			faulty: func(op, trigger, sfx string) runner.Runner {
				return corruptingOperator(op, trigger, sfx, func(_, _, meta string) error {
					data, err := os.ReadFile(meta)
					if err != nil {
						return err
					}
					return os.WriteFile(meta, []byte(strings.ReplaceAll(string(data), "b-"+sfx, "../../../../escape-"+sfx)), 0o644)
				})
			},
			result: manager.ResultRejected, reason: "OutputsRejected", message: "read the output dir",
		},
		{
			name: "symlink out of the output dir",
			faulty: func(op, trigger, sfx string) runner.Runner {
				return corruptingOperator(op, trigger, sfx, func(_, body, _ string) error {
					// The link points at a valid body outside the output dir: were it followed,
					// its content would be applied.
					outside := filepath.Join(os.TempDir(), "topolayer-e2e-outside-"+sfx+".yaml")
					if err := os.WriteFile(outside, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b-"+sfx+", namespace: openshift-fault}\ndata: {value: outside}\n"), 0o644); err != nil {
						return err
					}
					if err := os.Remove(body); err != nil {
						return err
					}
					return os.Symlink(outside, body)
				})
			},
			result: manager.ResultRejected, reason: "OutputsRejected", message: "symbolic link",
		},
		{
			name: "disk full",
			breakIt: func(t *testing.T, workDir, op string) func() {
				return fillDisk(t, filepath.Join(workDir, op))
			},
			result: manager.ResultFailed, reason: "RunFailed", message: "no space left on device",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { testFault(t, tc) })
	}
}

// managedHCP is a hosted control plane of a test's own for the manager it starts (see
// managedHostedControlPlane), a suffix for the test's object names, and clients of both
// clusters.
type managedHCP struct {
	cfg     *config.TopologyConfig
	hcpNS   string // the HCP namespace
	sfx     string // see uniqueSuffix
	guestCS *kubernetes.Clientset
	mgmtCS  *kubernetes.Clientset
}

// newManagedHCP creates a hosted control plane named name for a manager of the test's own.
func newManagedHCP(t *testing.T, name string) managedHCP {
	t.Helper()
	m := managedHCP{cfg: managedHostedControlPlane(t, name), sfx: uniqueSuffix(t)}
	m.hcpNS = m.cfg.Topology.Hosted.Namespace
	m.guestCS, _ = clients(t, hosted.Config(cluster.Guest))
	m.mgmtCS, _ = clients(t, hosted.Config(cluster.Management))
	return m
}

// testFault runs one fault case; see TestManagerOperatorFaults.
func testFault(t *testing.T, tc faultCase) {
	ctx := t.Context()
	m := newManagedHCP(t, "faults")
	faultOp, healthyOp := "faulty-"+m.sfx, "healthy-"+m.sfx
	trigger, settings := "trigger-"+m.sfx, "settings-"+m.sfx
	setGuestValue(t, m.guestCS, trigger, "v1")
	setGuestValue(t, m.guestCS, settings, "h1")

	sw := &switchRunner{good: pairOperator(faultOp, trigger, m.sfx)}
	if tc.faulty != nil {
		sw.faulty = tc.faulty(faultOp, trigger, m.sfx)
	}
	var healthyRuns atomic.Int64
	workDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(workDir, faultOp), 0o755); err != nil {
		t.Fatal(err)
	}
	_, reg := startFaultManager(t, m.cfg, []manager.Operator{{Name: faultOp, Runner: sw}, echoOperator(healthyOp, settings, &healthyRuns)}, faultManagerOptions{workDir: workDir})

	pair := func(ctx context.Context) (string, string, error) {
		a, err := valueOf(ctx, m.mgmtCS, m.hcpNS, "openshift-fault--a-"+m.sfx)
		if err != nil {
			return "", "", err
		}
		b, err := valueOf(ctx, m.mgmtCS, m.hcpNS, "openshift-fault--b-"+m.sfx)
		return a, b, err
	}
	pairIs := func(want string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			a, b, err := pair(ctx)
			return a == want && b == want, err
		}
	}
	healthyIs := func(want string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			v, err := valueOf(ctx, m.mgmtCS, m.hcpNS, "openshift-echo--"+healthyOp)
			return v == want, err
		}
	}
	waitLong(t, "the old state: both objects at v1", 30*time.Second, pairIs("v1"))
	waitLong(t, "the healthy operator's first run", 30*time.Second, healthyIs("h1"))

	// Break it, and change what it reads: its runs fail.
	var repair func()
	if tc.breakIt != nil {
		repair = tc.breakIt(t, workDir, faultOp)
	} else {
		sw.broken.Store(true)
		repair = func() { sw.broken.Store(false) }
	}
	failedBefore := runsWith(t, reg, faultOp, tc.result)
	setGuestValue(t, m.guestCS, trigger, "v2")

	// Record when each failed run ends: three of them show the backoff growing.
	var failedAt []time.Time
	last := failedBefore
	waitLong(t, "three failed runs", 60*time.Second, func(ctx context.Context) (bool, error) {
		if n := runsWith(t, reg, faultOp, tc.result); n > last {
			for range int(n - last) {
				failedAt = append(failedAt, time.Now())
			}
			last = n
		}
		// Never a partial plan: both objects at their old state all along.
		if a, b, err := pair(ctx); err != nil || a != "v1" || b != "v1" {
			return false, fmt.Errorf("while %s: objects at %q and %q (want both v1): %v", tc.name, a, b, err)
		}
		return len(failedAt) >= 3, nil
	})
	gap1, gap2 := failedAt[1].Sub(failedAt[0]), failedAt[2].Sub(failedAt[1])
	t.Logf("failed runs %s apart, then %s", gap1.Round(10*time.Millisecond), gap2.Round(10*time.Millisecond))
	if gap2 <= gap1 {
		t.Errorf("retries %s then %s apart: the backoff does not grow", gap1, gap2)
	}

	// The status object and the event say why.
	st, err := m.mgmtCS.CoreV1().ConfigMaps(m.hcpNS).Get(ctx, manager.StatusName(faultOp), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rec manager.RunRecord
	if err := yaml.Unmarshal([]byte(st.Data["status.yaml"]), &rec); err != nil {
		t.Fatalf("status of %s: %v", faultOp, err)
	}
	if st.Data["result"] != tc.result || !strings.Contains(rec.Message, tc.message) {
		t.Errorf("status of %s: result %s, want %s with %q:\n%s", faultOp, st.Data["result"], tc.result, tc.message, st.Data["status.yaml"])
	}
	waitLong(t, "the "+tc.reason+" event", 30*time.Second, func(context.Context) (bool, error) {
		return strings.Contains(eventReasons(t, m.hcpNS, faultOp)[tc.reason], tc.message), nil
	})
	t.Logf("%s event: %s", tc.reason, eventReasons(t, m.hcpNS, faultOp)[tc.reason])

	// The healthy operator keeps converging meanwhile.
	setGuestValue(t, m.guestCS, settings, "h2")
	waitLong(t, "the healthy operator converging during the fault", 30*time.Second, healthyIs("h2"))
	if a, b, err := pair(ctx); err != nil || a != "v1" || b != "v1" {
		t.Errorf("during the fault: objects at %q and %q, want both v1 (%v)", a, b, err)
	}

	// Repaired, the next retry converges to a fresh run's state.
	repair()
	waitLong(t, "the new state after the repair: both objects at v2", 90*time.Second, pairIs("v2"))
	waitLong(t, "a succeeded status", 30*time.Second, func(ctx context.Context) (bool, error) {
		st, err := m.mgmtCS.CoreV1().ConfigMaps(m.hcpNS).Get(ctx, manager.StatusName(faultOp), metav1.GetOptions{})
		return err == nil && st.Data["result"] == manager.ResultSucceeded, err
	})
	fresh := freshPair(t, trigger, m.sfx, "v2")
	for _, name := range []string{"a-" + m.sfx, "b-" + m.sfx} {
		if got, err := valueOf(ctx, m.mgmtCS, m.hcpNS, "openshift-fault--"+name); err != nil || got != fresh[name] {
			t.Errorf("%s after the repair: %q (%v), a fresh run writes %q", name, got, err, fresh[name])
		}
	}
	if _, err := m.mgmtCS.CoreV1().ConfigMaps(m.hcpNS).Get(ctx, "openshift-fault--escape-"+m.sfx, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an object of a rejected plan exists (or cannot be read: %v)", err)
	}
}

// freshPair runs the good operator once, as a fresh topolayer run would, on an input dir
// holding the trigger ConfigMap with value, and returns the value of each ConfigMap it
// writes by name.
func freshPair(t *testing.T, trigger, sfx, value string) map[string]string {
	t.Helper()
	in := t.TempDir()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": trigger, "namespace": "openshift-config"},
		"data":     map[string]any{"value": value},
	}}
	if err := contract.WriteInputDir(in, []*contract.InputObject{{Resource: "configmaps", Namespace: "openshift-config", Object: obj}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "output")
	if _, err := pairOperator("fresh", trigger, sfx).Run(t.Context(), runner.Request{InputDir: in, OutputDir: out}); err != nil {
		t.Fatal(err)
	}
	dir, err := contract.ReadOutputDir(out, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range dir.Mutations {
		var o unstructured.Unstructured
		if err := yaml.Unmarshal(m.Body, &o.Object); err != nil {
			t.Fatal(err)
		}
		v, _, _ := unstructured.NestedString(o.Object, "data", "value")
		got[o.GetName()] = v
	}
	return got
}
