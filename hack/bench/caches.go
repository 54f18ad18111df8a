package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/topolayer/topolayer/hack/bench/fleet"
	"github.com/topolayer/topolayer/mom/manager"

	"github.com/topolayer/topolayer/hack/proctree"
)

// sideResult is what one side of the cache comparison measured.
type sideResult struct {
	name              string
	processes         int
	workload          auditCounts // from the start of the side to the end of the drain
	idle              auditCounts // the idle minute
	pollerIdle        auditCounts // the poller's requests in the same idle minute
	idleWindow        time.Duration
	metricRequests    float64 // apiserver_request_total delta, all clients
	metricLists       float64
	metricWatchesOpen float64 // apiserver_longrunning_requests{verb=WATCH} at the end of the workload, minus before
	mem               memStats
	ready             time.Duration
	latencies         []time.Duration // per change: until every operator that reads it applied it
	missing           int
	changes           int
	runWindow         time.Duration
	hwmSumBytes       int64
}

// change is one change of the workload.
type change struct {
	seq  int64
	kind int
	at   time.Time
}

// observation is one output seen by the harness.
type observation struct {
	at  time.Time
	seq int64
}

// outputWatcher records when each operator's output shows each sequence number.
type outputWatcher struct {
	mu  sync.Mutex
	obs map[string][]observation
}

func (w *outputWatcher) record(obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	op, ok := strings.CutPrefix(cm.Name, "out-")
	if !ok {
		return
	}
	seq, err := strconv.ParseInt(cm.Data[fleet.SeqKey], 10, 64)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.obs[op] = append(w.obs[op], observation{at: time.Now(), seq: seq})
}

// reached returns when op's output first showed seq or more.
func (w *outputWatcher) reached(op string, seq int64) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.obs[op] {
		if o.seq >= seq {
			return o.at, true
		}
	}
	return time.Time{}, false
}

// watchOutputs starts an informer on the output namespace until ctx is done.
func watchOutputs(ctx context.Context, cs kubernetes.Interface) *outputWatcher {
	w := &outputWatcher{obs: map[string][]observation{}}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(fleet.OutputNamespace))
	inf := f.Core().V1().ConfigMaps().Informer()
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    w.record,
		UpdateFunc: func(_, n any) { w.record(n) },
	})
	f.Start(ctx.Done())
	return w
}

// cachesSetup is the API server and the objects of sections 2-4.
type cachesSetup struct {
	srv *apiServer
	c   client.Client
	cs  kubernetes.Interface
	dyn dynamic.Interface
	seq int64
}

// setupCaches starts the API server of sections 2-4 and creates the inputs.
func (h *harness) setupCaches(ctx context.Context) (*cachesSetup, error) {
	start := time.Now()
	srv, err := startAPIServer(h.assets, filepath.Join(h.scratch, "apiserver-caches"))
	if err != nil {
		return nil, err
	}
	cfg := harnessConfig(srv.cfg)
	s := &cachesSetup{srv: srv}
	if s.c, err = client.New(cfg, client.Options{}); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if s.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if s.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	for _, ns := range []string{fleet.Namespace, fleet.OutputNamespace, "bench-le", "topolayer-system"} {
		if err := s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	for _, k := range fleet.Kinds {
		for j := range fleet.ObjectsPerKind {
			if err := s.c.Create(ctx, k.New(fleet.ObjectName(j))); err != nil {
				return nil, fmt.Errorf("input %s %s: %w", k.GVR.Resource, fleet.ObjectName(j), err)
			}
		}
	}
	h.logf("API server %s with %d inputs ready in %s", srv.cfg.Host, len(fleet.Kinds)*fleet.ObjectsPerKind, time.Since(start).Round(time.Millisecond))
	return s, nil
}

// change sets the next sequence number on object j of kind k.
func (s *cachesSetup) change(ctx context.Context, k, j int) (change, error) {
	s.seq++
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, fleet.SeqAnnotation, strconv.FormatInt(s.seq, 10))
	ch := change{seq: s.seq, kind: k, at: time.Now()}
	_, err := s.dyn.Resource(fleet.Kinds[k].GVR).Namespace(fleet.Namespace).Patch(ctx, fleet.ObjectName(j), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return ch, fmt.Errorf("change %d: %w", s.seq, err)
	}
	return ch, nil
}

// sideOptions say how to run one side.
type sideOptions struct {
	name     string
	uaPrefix string
	start    func(logDir string) ([]*exec.Cmd, error)
	idle     time.Duration // 0: no idle window
	poller   bool          // run the poller during the idle window
}

// workload is the scripted workload: changes changes, one every interval, cycling through
// the kinds and their objects.
const (
	workloadChanges  = 200
	workloadInterval = 600 * time.Millisecond
	operators        = 10
)

// runSide runs one side: its processes, the workload, the drain, an idle window.
func (h *harness) runSide(ctx context.Context, s *cachesSetup, o sideOptions) (*sideResult, error) {
	h.logf("-- side %s", o.name)
	res := &sideResult{name: o.name}
	if err := s.c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(fleet.OutputNamespace)); err != nil {
		return nil, fmt.Errorf("clear the outputs: %w", err)
	}
	time.Sleep(2 * time.Second) // the audit log's batch
	off0 := s.srv.auditOffset()
	m0, err := readServerCounts(ctx, s.srv.cfg)
	if err != nil {
		return nil, err
	}
	wctx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	w := watchOutputs(wctx, s.cs)

	logDir := filepath.Join(h.scratch, "logs", o.name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("logs: %w", err)
	}
	start := time.Now()
	cmds, err := o.start(logDir)
	sampler := newMemSampler(250 * time.Millisecond)
	for _, c := range cmds {
		sampler.add(c.Process.Pid)
	}
	defer stopAll(cmds)
	if err != nil {
		return nil, err
	}
	res.processes = len(cmds)

	// Ready: every operator applied its first output.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		n := 0
		for i := range operators {
			if _, ok := w.reached(fleet.OperatorName(i), 0); ok {
				n++
			}
		}
		if n == operators {
			break
		}
		gone := 0
		for _, c := range cmds {
			if exited(c.Process.Pid) {
				gone++
			}
		}
		if gone > 0 || time.Now().After(deadline) {
			return nil, fmt.Errorf("side %s: %d processes exited, %d of %d operators wrote their first output (logs in %s)", o.name, gone, n, operators, logDir)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res.ready = time.Since(start)
	h.logf("%s: %d processes, every output written %s after start", o.name, len(cmds), res.ready.Round(time.Millisecond))

	var changes []change
	tick := time.NewTicker(workloadInterval)
	for i := range workloadChanges {
		ch, err := s.change(ctx, i%len(fleet.Kinds), (i/len(fleet.Kinds))%fleet.ObjectsPerKind)
		if err != nil {
			tick.Stop()
			return nil, err
		}
		changes = append(changes, ch)
		<-tick.C
	}
	tick.Stop()
	mw, err := readServerCounts(ctx, s.srv.cfg)
	if err != nil {
		return nil, err
	}
	// Drain: wait until every operator shows the last change it reads (at most 30s).
	last := map[int]int64{}
	for _, ch := range changes {
		for _, r := range fleet.Readers(operators, ch.kind) {
			last[r] = max(last[r], ch.seq)
		}
	}
	drainEnd := time.Now().Add(30 * time.Second)
	for time.Now().Before(drainEnd) {
		done := true
		for r, seq := range last {
			if _, ok := w.reached(fleet.OperatorName(r), seq); !ok {
				done = false
			}
		}
		if done {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	res.runWindow = time.Since(start)
	res.mem = sampler.snapshot()
	for _, c := range cmds {
		res.hwmSumBytes += proctree.StatusBytes(c.Process.Pid, "VmHWM")
	}
	m1, err := readServerCounts(ctx, s.srv.cfg)
	if err != nil {
		return nil, err
	}
	res.metricRequests = m1.requests - m0.requests
	res.metricLists = m1.lists - m0.lists
	res.metricWatchesOpen = mw.watchesOpen - m0.watchesOpen

	for _, ch := range changes {
		var worst time.Duration
		ok := true
		for _, r := range fleet.Readers(operators, ch.kind) {
			at, reached := w.reached(fleet.OperatorName(r), ch.seq)
			if !reached {
				ok = false
				break
			}
			worst = max(worst, at.Sub(ch.at))
		}
		if !ok {
			res.missing++
			continue
		}
		res.latencies = append(res.latencies, worst)
	}
	res.changes = len(changes)
	slices.Sort(res.latencies)

	// The audit log's batch; and the status records topolayer defers until an operator's
	// runs are quiet are written after its last runs: they are the workload's, not idle.
	time.Sleep(2*time.Second + manager.DefaultStatusQuiet)
	offIdle := s.srv.auditOffset()
	if o.idle > 0 {
		var poller *exec.Cmd
		if o.poller {
			args := []string{h.benchBin("poller"), "--kubeconfig", s.srv.kubeconfig, "--operators", strconv.Itoa(operators)}
			h.rep.command(args...)
			if poller, err = startLogged(args, filepath.Join(logDir, "poller.log"), nil); err != nil {
				return nil, err
			}
		}
		time.Sleep(o.idle)
		if poller != nil {
			stopAll([]*exec.Cmd{poller})
		}
		time.Sleep(2 * time.Second)
		offEnd := s.srv.auditOffset()
		if res.idle, err = s.srv.countAudit(offIdle, offEnd, o.uaPrefix); err != nil {
			return nil, err
		}
		if o.poller {
			if res.pollerIdle, err = s.srv.countAudit(offIdle, offEnd, "poller/"); err != nil {
				return nil, err
			}
		}
		res.idleWindow = o.idle
	}
	if res.workload, err = s.srv.countAudit(off0, offIdle, o.uaPrefix); err != nil {
		return nil, err
	}
	sampler.finish()
	h.logf("%s: %+v; metrics: %.0f requests, %.0f LISTs, %.0f watches open; peak RSS %.0f MiB, %.2f GB·s; latency p50 %s p99 %s (%d missing)",
		o.name, res.workload, res.metricRequests, res.metricLists, res.metricWatchesOpen, mib(res.mem.PeakBytes), res.mem.GBSeconds,
		pct(res.latencies, 50), pct(res.latencies, 99), res.missing)
	return res, nil
}

// pct returns the p-th percentile of sorted durations (nearest rank).
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// startLogged starts a process with its output in logFile.
func startLogged(args []string, logFile string, env []string) (*exec.Cmd, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", strings.Join(args, " "), err)
	}
	go func() {
		_ = cmd.Wait()
		f.Close()
	}()
	return cmd, nil
}

// stopAll sends SIGTERM to every process, waits up to 15s for them to exit, then kills
// those left.
func stopAll(cmds []*exec.Cmd) {
	for _, c := range cmds {
		if c.Process != nil {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, c := range cmds {
		for c.Process != nil && time.Now().Before(deadline) && c.Process.Signal(syscall.Signal(0)) == nil && !exited(c.Process.Pid) {
			time.Sleep(50 * time.Millisecond)
		}
		if c.Process != nil && !exited(c.Process.Pid) {
			_ = c.Process.Kill()
		}
	}
}

// exited reports whether pid is gone or a zombie.
func exited(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || i+2 >= len(data) || data[i+2] == 'Z'
}

// topolayerConfig writes a standalone topolayer run configuration for the fleet.
func (h *harness) topolayerConfig(debounce time.Duration) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology: {type: Standalone}\n")
	fmt.Fprintf(&b, "scheduler: {debounce: %s, cooldown: 0s}\nmanager: {namespace: topolayer-system}\noperators:\n", debounce)
	for i := range operators {
		op := fleet.OperatorName(i)
		fmt.Fprintf(&b, "- name: %s\n  command: [%s]\n  env: {BENCH_OPERATOR: %s}\n  limits: {timeout: 1m}\n", op, h.benchBin("benchop"), op)
	}
	path := filepath.Join(h.scratch, fmt.Sprintf("fleet-debounce-%s.yaml", debounce))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("configuration: %w", err)
	}
	return path, nil
}

// runCaches runs sections 2, 3 and 4.
func (h *harness) runCaches(ctx context.Context) error {
	h.logf("== 2-4. shared caches, polling, latency")
	s, err := h.setupCaches(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err := s.srv.stop(); err != nil {
			h.logf("%v", err)
		}
	}()
	resident := sideOptions{name: "a-resident", uaPrefix: "resident/", idle: time.Minute, start: func(logDir string) ([]*exec.Cmd, error) {
		var cmds []*exec.Cmd
		for i := range operators {
			args := []string{h.benchBin("resident"), "--kubeconfig", s.srv.kubeconfig, "--operator", fleet.OperatorName(i)}
			if i == 0 {
				h.rep.command(append(args[:len(args):len(args)], "# and op01 ... op09")...)
			}
			c, err := startLogged(args, filepath.Join(logDir, fleet.OperatorName(i)+".log"), nil)
			if err != nil {
				return cmds, err
			}
			cmds = append(cmds, c)
		}
		return cmds, nil
	}}
	// topolayer runs the fleet under one MOM process: `topolayer run`, each operator its
	// benchop binary (the exec runner), or inproc, each operator linked in (the in-memory
	// runner), with the same configuration.
	topolayer := func(inProcess bool, debounce, idle time.Duration) sideOptions {
		name, ua, prog := "b-topolayer-debounce-"+debounce.String(), "topolayer/", "topolayer"
		if inProcess {
			name, ua, prog = "c-inprocess-debounce-"+debounce.String(), "inproc/", "inproc"
		}
		return sideOptions{name: name, uaPrefix: ua, idle: idle, poller: idle > 0 && !inProcess,
			start: func(logDir string) ([]*exec.Cmd, error) {
				cfg, err := h.topolayerConfig(debounce)
				if err != nil {
					return nil, err
				}
				workDir := filepath.Join(h.scratch, "work-"+name)
				if err := os.MkdirAll(workDir, 0o755); err != nil {
					return nil, fmt.Errorf("work dir: %w", err)
				}
				args := []string{h.bin("topolayer"), "run", "--config", cfg, "--kubeconfig", s.srv.kubeconfig, "--metrics-bind-address", "0", "--work-dir", workDir}
				if inProcess {
					args = []string{h.benchBin("inproc"), "--config", cfg, "--kubeconfig", s.srv.kubeconfig, "--work-dir", workDir}
				}
				h.rep.command(args...)
				c, err := startLogged(args, filepath.Join(logDir, prog+".log"), nil)
				if err != nil {
					return nil, err
				}
				return []*exec.Cmd{c}, nil
			}}
	}
	results := map[string]*sideResult{}
	for _, side := range []struct {
		key string
		o   sideOptions
	}{
		{"a", resident},
		{"b", topolayer(false, 0, time.Minute)},
		{"b2", topolayer(false, 2*time.Second, 0)},
		{"c", topolayer(true, 0, time.Minute)},
		{"c2", topolayer(true, 2*time.Second, 0)},
	} {
		if h.sides != "" && !slices.Contains(strings.Split(h.sides, ","), side.key) {
			continue
		}
		r, err := h.runSide(ctx, s, side.o)
		if err != nil {
			return err
		}
		results[side.key] = r
	}
	if len(results) < 5 {
		h.logf("-sides %s: no report (it needs every side)", h.sides)
		return nil
	}
	a, b, d2, c, c2 := results["a"], results["b"], results["b2"], results["c"], results["c2"]
	h.reportCaches(a, b, d2, c, c2)
	return nil
}
