package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/topolayer/topolayer/config"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/e2e/promtext"
	"github.com/topolayer/topolayer/internal/syncbuf"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/namespaces"
)

// sampleGVR is the sample operator's CR, and shadowSampleGVR its shadow in an HCP namespace.
// The environments hold the CR `cluster` (cluster.Installed), as an installation would.
var (
	sampleGVR       = schema.GroupVersionResource{Group: "operator.topolayer.dev", Version: "v1alpha1", Resource: "samples"}
	shadowSampleGVR = schema.GroupVersionResource{Group: namespaces.ShadowGroup(sampleGVR.Group), Version: sampleGVR.Version, Resource: sampleGVR.Resource}
)

// demoConfig writes a copy of an examples/ demo configuration whose operator commands are
// the binaries built for the tests, with a short debounce, and returns its path.
func demoConfig(t *testing.T, example string, edit func(*config.TopologyConfig)) string {
	t.Helper()
	return configWith(t, example, func(cfg *config.TopologyConfig) {
		for i := range cfg.Operators {
			cfg.Operators[i].Command = []string{binary(t, cfg.Operators[i].Name)}
		}
		cfg.Scheduler.Debounce.Duration = 300 * time.Millisecond
		cfg.Scheduler.Cooldown.Duration = 0
		if edit != nil {
			edit(cfg)
		}
	})
}

// runProcess is a `topolayer run` started by a test.
type runProcess struct {
	cmd        *exec.Cmd
	metricsURL string // the metrics endpoint's URL
	stopped    bool
	log        syncbuf.Buffer // the process's stdout and stderr
	done       chan error
}

// Log returns what the process logged so far.
func (p *runProcess) Log() string { return p.log.String() }

// startRun starts `topolayer run` with args; see startProcess.
func startRun(t *testing.T, args ...string) *runProcess {
	t.Helper()
	return startProcess(t, binary(t, "topolayer"), append([]string{"run"}, args...)...)
}

// startProcess starts a program that runs topolayer's manager (topolayer run, or a program
// that embeds it) with args, a metrics endpoint on a free loopback port
// (--metrics-bind-address) and a work directory of the test's (--work-dir). It is stopped
// with SIGTERM at the end of the test, and must then exit 0.
func startProcess(t *testing.T, bin string, args ...string) *runProcess {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	p := &runProcess{metricsURL: "http://" + addr + "/metrics", done: make(chan error, 1)}
	p.cmd = exec.Command(bin, append(args, "--metrics-bind-address", addr, "--work-dir", t.TempDir())...)
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { p.stop(t) })
	onInterrupt(t, func() { _ = p.cmd.Process.Kill() })
	return p
}

// stop ends the process with SIGTERM (once) and checks that it exits 0 within 60s.
func (p *runProcess) stop(t *testing.T) {
	t.Helper()
	if p.stopped {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("%s exited with %v after SIGTERM", filepath.Base(p.cmd.Path), err)
		}
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("%s did not stop within 60s of SIGTERM", filepath.Base(p.cmd.Path))
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("%s log:\n%s", filepath.Base(p.cmd.Path), p.Log())
	}
}

// metrics reads the process's metrics endpoint; nil while it is not up yet.
func (p *runProcess) metrics(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(p.metricsURL)
	if err != nil {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("topolayer run exited (%v):\n%s", err, p.Log())
		default:
		}
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	families, err := promtext.Parse(body)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	return families
}

// sum adds up the values of the samples of a counter or gauge whose labels include labels.
func sum(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	return promtext.Sum(families, name, labels)
}

// runCounts are an operator's finished runs by trigger (start, change, own-writes, resync,
// hosted-control-plane).
type runCounts map[string]float64

// runs returns the finished runs of operator by trigger, from topolayer_operator_runs_total.
func (p *runProcess) runs(t *testing.T, operator string) runCounts {
	t.Helper()
	families := p.metrics(t)
	out := runCounts{}
	for _, trigger := range []string{manager.TriggerStart, manager.TriggerChange, manager.TriggerOwnWrites, manager.TriggerResync, manager.TriggerHostedControlPlane} {
		out[trigger] = sum(families, "topolayer_operator_runs_total", map[string]string{"operator": operator, "trigger": trigger})
	}
	return out
}

// eventually polls cond every 200ms for up to 30s.
func eventually(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	eventuallyWithin(t, what, 30*time.Second, cond)
}

// eventuallyWithin is eventually with another time limit.
func eventuallyWithin(t *testing.T, what string, limit time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	eventuallyEvery(t, what, 200*time.Millisecond, limit, cond)
}

// eventuallyEvery polls cond every interval for up to limit and fails the test, saying
// what it waited for, if cond does not hold by then.
func eventuallyEvery(t *testing.T, what string, interval, limit time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := poll(t.Context(), interval, limit, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// poll calls cond every interval, the first time at once, until it holds, for up to limit.
// A not-found error means "not yet"; any other error of cond ends the wait. It returns the
// error that ended the wait, or nil once cond holds.
func poll(ctx context.Context, interval, limit time.Duration, cond func(context.Context) (bool, error)) error {
	return wait.PollUntilContextTimeout(ctx, interval, limit, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return ok, err
	})
}

// schedulerIdle is a condition to wait for: it holds once the scheduler of p has been idle
// (nothing running, nothing waiting) for 2s, longer than the test configurations' debounce.
func schedulerIdle(t *testing.T, p *runProcess) func(context.Context) (bool, error) {
	var idleSince time.Time
	return func(context.Context) (bool, error) {
		f := p.metrics(t)
		// A status record deferred until the operator's runs are quiet is written after the
		// runs: the manager is idle once it is.
		busy := f == nil || sum(f, "topolayer_scheduler_running", nil)+sum(f, "topolayer_scheduler_queue_depth", nil)+sum(f, "topolayer_operator_status_pending", nil) > 0
		switch {
		case busy:
			idleSince = time.Time{}
		case idleSince.IsZero():
			idleSince = time.Now()
		}
		return !idleSince.IsZero() && time.Since(idleSince) >= 2*time.Second, nil
	}
}

// settle waits until the scheduler is idle (see schedulerIdle) and returns the operators'
// run counts.
func settle(t *testing.T, p *runProcess, operators ...string) map[string]runCounts {
	t.Helper()
	// A real operator converges in a few runs of several seconds each (the
	// cluster-authentication-operator: 4-6 runs of 4-8 s on a shared machine).
	eventuallyWithin(t, "the scheduler idle", 2*time.Minute, schedulerIdle(t, p))
	out := map[string]runCounts{}
	for _, op := range operators {
		out[op] = p.runs(t, op)
	}
	return out
}

// checkRuns checks that, between two settled points, each operator ran want times because
// of a change of its inputs, and that its own writes re-triggered it at most twice (it
// converged).
func checkRuns(t *testing.T, what string, before, after map[string]runCounts, want map[string]float64) {
	t.Helper()
	for op, n := range want {
		if d := after[op][manager.TriggerChange] - before[op][manager.TriggerChange]; d != n {
			t.Errorf("%s: %s ran %v times for the change, want %v", what, op, d, n)
		}
		if d := after[op][manager.TriggerOwnWrites] - before[op][manager.TriggerOwnWrites]; d > 2 {
			t.Errorf("%s: %s ran %v times for its own writes, want at most 2 (it does not converge)", what, op, d)
		}
	}
}

// kubectl runs the machine's kubectl (skipping the test when there is none).
func kubectl(t *testing.T, kubeconfig string, args ...string) {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH")
	}
	out, err := exec.CommandContext(t.Context(), path, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func ensureNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// sampleScenario says where the sample operators' inputs and outputs are in one topology.
type sampleScenario struct {
	// kubeconfig is where the user edits openshift-config (the guest, or the one cluster).
	kubeconfig string
	// user holds openshift-config and the ClusterRole (the guest, or the one cluster).
	user kubernetes.Interface
	// operand and operandNS hold the sample Deployment, named deployment.
	operand    kubernetes.Interface
	operandNS  string
	deployment string
	// sample reads the operator's CR (its shadow in the HCP namespace when hosted).
	sample dynamic.ResourceInterface
	// status holds the operators' status ConfigMaps.
	status   kubernetes.Interface
	statusNS string
	// placedReplicas is the count the Deployment is placed with when the operator writes
	// want; nil: want. The hypershift profile sizes it by the HostedControlPlane instead.
	placedReplicas func(want int32) int32
}

// replicas returns the count the sample Deployment is placed with when the operator writes
// want.
func (sc sampleScenario) replicas(want int32) int32 {
	if sc.placedReplicas == nil {
		return want
	}
	return sc.placedReplicas(want)
}

const sampleOp, auditOp = "sample-operator", "sample-audit-operator"

// run drives the acceptance scenario of topolayer run against p: a user creates
// openshift-config/sample-settings with kubectl; the sample Deployment appears with its
// replicas, the ClusterRole where user workloads live, the status on the Sample CR; the
// Deployment's pods becoming available are reported; a change of replicas follows; each
// operator runs once per change of what it reads, and only the operators that read it.
func (sc sampleScenario) run(t *testing.T, p *runProcess) {
	ctx := t.Context()
	eventually(t, "the first runs of both operators", func(context.Context) (bool, error) {
		return p.runs(t, sampleOp)[manager.TriggerStart] >= 1 && p.runs(t, auditOp)[manager.TriggerStart] >= 1, nil
	})
	before := settle(t, p, sampleOp, auditOp)

	kubectl(t, sc.kubeconfig, "create", "configmap", "sample-settings", "-n", "openshift-config", "--from-literal=replicas=2")
	start := time.Now()
	replicas := func(want int32) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			d, err := sc.operand.AppsV1().Deployments(sc.operandNS).Get(ctx, sc.deployment, metav1.GetOptions{})
			return err == nil && d.Spec.Replicas != nil && *d.Spec.Replicas == want, err
		}
	}
	eventually(t, fmt.Sprintf("the sample Deployment with %d replicas", sc.replicas(2)), replicas(sc.replicas(2)))
	t.Logf("sample-settings created → %s/%s with %d replicas in %s", sc.operandNS, sc.deployment, sc.replicas(2), time.Since(start).Round(time.Millisecond))
	if _, err := sc.user.RbacV1().ClusterRoles().Get(ctx, "system:openshift:sample", metav1.GetOptions{}); err != nil {
		t.Errorf("the ClusterRole: %v", err)
	}
	observed := func(want int64) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			got, err := sc.sample.Get(ctx, "cluster", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			n, found, _ := unstructured.NestedInt64(got.Object, "status", "observedReplicas")
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			return found && n == want && len(conds) > 0, nil
		}
	}
	eventually(t, "the status of the Sample CR", observed(0))
	afterCreate := settle(t, p, sampleOp, auditOp)
	checkRuns(t, "sample-settings created", before, afterCreate, map[string]float64{sampleOp: 1, auditOp: 1})

	// The environment has no kube-controller-manager: the test plays its part and reports
	// the Deployment's pods available. The sample operator reads its Deployment, so it runs
	// and reports the replicas on its CR; the audit operator does not read it.
	d, err := sc.operand.AppsV1().Deployments(sc.operandNS).Get(ctx, sc.deployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	if _, err := sc.operand.AppsV1().Deployments(sc.operandNS).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Sample CR reporting 2 replicas", observed(2))
	afterPods := settle(t, p, sampleOp, auditOp)
	checkRuns(t, "pods available", afterCreate, afterPods, map[string]float64{sampleOp: 1, auditOp: 0})

	kubectl(t, sc.kubeconfig, "patch", "configmap", "sample-settings", "-n", "openshift-config", "--type=merge", "-p", `{"data":{"replicas":"3"}}`)
	eventually(t, fmt.Sprintf("the sample Deployment with %d replicas", sc.replicas(3)), replicas(sc.replicas(3)))
	afterChange := settle(t, p, sampleOp, auditOp)
	checkRuns(t, "replicas changed", afterPods, afterChange, map[string]float64{sampleOp: 1, auditOp: 1})

	kubectl(t, sc.kubeconfig, "create", "configmap", "audit-policy", "-n", "openshift-config", "--from-literal=policy=WriteRequestBodies")
	afterAudit := settle(t, p, sampleOp, auditOp)
	checkRuns(t, "audit-policy created", afterChange, afterAudit, map[string]float64{sampleOp: 0, auditOp: 1})
	if d := afterAudit[sampleOp][manager.TriggerOwnWrites] - afterChange[sampleOp][manager.TriggerOwnWrites]; d != 0 {
		t.Errorf("sample-operator ran %v times after audit-policy was created, want 0", d)
	}

	for _, op := range []string{sampleOp, auditOp} {
		st, err := sc.status.CoreV1().ConfigMaps(sc.statusNS).Get(ctx, manager.StatusName(op), metav1.GetOptions{})
		if err != nil {
			t.Errorf("the status object of %s: %v", op, err)
			continue
		}
		if st.Data["result"] != manager.ResultSucceeded {
			t.Errorf("the status object of %s:\n%s", op, st.Data["status.yaml"])
		}
	}
}

// resetSampleInputs deletes what an earlier test may have left of the scenario's inputs.
func resetSampleInputs(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ensureNamespace(t, cs, "openshift-config")
	for _, name := range []string{"sample-settings", "audit-policy"} {
		err := cs.CoreV1().ConfigMaps("openshift-config").Delete(t.Context(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// hostedSample is the hosted environment made ready for a run of the sample operators: the
// kubeconfigs written, clients of both clusters, the scenario's inputs removed from the guest.
type hostedSample struct {
	hcpNS   string // the HCP namespace
	kubeDir string // where the kubeconfigs are, see writeKubeconfigs
	guestCS *kubernetes.Clientset
	mgmtCS  *kubernetes.Clientset
	mgmtDyn *dynamic.DynamicClient
}

// newHostedSample makes the hosted environment ready for a run of the sample operators.
func newHostedSample(t *testing.T) hostedSample {
	t.Helper()
	h := hostedSample{hcpNS: hosted.HostedControlPlane().Namespace, kubeDir: writeKubeconfigs(t, hosted)}
	h.guestCS, _ = clients(t, hosted.Config(cluster.Guest))
	h.mgmtCS, h.mgmtDyn = clients(t, hosted.Config(cluster.Management))
	resetSampleInputs(t, h.guestCS)
	return h
}

// startRun starts topolayer run on the hosted environment with examples/hosted-demo.yaml,
// edited by edit (nil: as it is).
func (h hostedSample) startRun(t *testing.T, edit func(*config.TopologyConfig)) *runProcess {
	t.Helper()
	return startRun(t, append([]string{"--config", demoConfig(t, "hosted-demo.yaml", edit)}, hostedKubeconfigFlags(h.kubeDir)...)...)
}

// TestRunHosted is the acceptance of topolayer run in the hosted topology with both sample
// operators of examples/hosted-demo.yaml: inputs under openshift-config on the guest, the
// operand in the HCP namespace, the ClusterRole on the guest, the status on the shadow of
// the Sample CR. The hypershift profile sizes the Deployment by the environment's
// HostedControlPlane (HighlyAvailable), which run reads live: a change of replicas runs the
// operator, and the placed count stays the profile's.
func TestRunHosted(t *testing.T) {
	h := newHostedSample(t)

	// The environment holds the operator's CR as HyperShift would create it: its shadow
	// (cluster.Installed).
	p := h.startRun(t, nil)
	sampleScenario{
		kubeconfig: cluster.KubeconfigFile(h.kubeDir, cluster.Guest),
		user:       h.guestCS,
		operand:    h.mgmtCS, operandNS: h.hcpNS, deployment: "openshift-sample--sample",
		sample: h.mgmtDyn.Resource(shadowSampleGVR).Namespace(h.hcpNS),
		status: h.mgmtCS, statusNS: h.hcpNS,
		// The hypershift profile sizes the Deployment by the environment's HostedControlPlane
		// (HighlyAvailable: its policy is not set), whatever the operator writes.
		placedReplicas: func(int32) int32 {
			return int32((&hypershift.HostedControlPlane{AvailabilityPolicy: hypershift.HighlyAvailable}).Replicas("sample"))
		},
	}.run(t, p)
}

// standaloneSample is the standalone environment made ready for a run of the sample
// operators, as hostedSample is the hosted one, with examples/standalone-demo.yaml.
type standaloneSample struct {
	kubeDir string // where the kubeconfigs are, see writeKubeconfigs
	cs      *kubernetes.Clientset
	dyn     *dynamic.DynamicClient
	cfgFile string                 // examples/standalone-demo.yaml, see demoConfig
	cfg     *config.TopologyConfig // what cfgFile holds
}

// newStandaloneSample makes the standalone environment ready for a run of the sample
// operators.
func newStandaloneSample(t *testing.T) standaloneSample {
	t.Helper()
	s := standaloneSample{kubeDir: writeKubeconfigs(t, standalone)}
	s.cs, s.dyn = clients(t, standalone.Config(cluster.Single))
	resetSampleInputs(t, s.cs)
	s.cfgFile = demoConfig(t, "standalone-demo.yaml", nil)
	var err error
	if s.cfg, err = config.Load(s.cfgFile); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunStandalone is the same acceptance on one cluster with
// examples/standalone-demo.yaml: every name unchanged, status objects in topolayer-system.
func TestRunStandalone(t *testing.T) {
	s := newStandaloneSample(t)
	// The operator's own namespace, where it records events, and its CR come with its
	// installation on a standalone cluster (cluster.Installed), not from its outputs.
	p := startRun(t, "--config", s.cfgFile, "--kubeconfig", cluster.KubeconfigFile(s.kubeDir, cluster.Single))
	sampleScenario{
		kubeconfig: cluster.KubeconfigFile(s.kubeDir, cluster.Single),
		user:       s.cs,
		operand:    s.cs, operandNS: "openshift-sample", deployment: "sample",
		sample: s.dyn.Resource(sampleGVR),
		status: s.cs, statusNS: s.cfg.Manager.Namespace,
	}.run(t, p)
}
