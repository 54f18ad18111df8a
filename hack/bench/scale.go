package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/e2e/promtext"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/namespaces"

	"github.com/topolayer/topolayer/hack/proctree"
)

const (
	scaleInstances = 100
	scaleWave      = 10 // instances started together; the next wave starts when this one converged
)

// sampleShadow is the shadow of the sample operator's CR on the management cluster.
var sampleShadow = schema.GroupVersionKind{Group: namespaces.ShadowGroup("operator.topolayer.dev"), Version: "v1alpha1", Kind: "Sample"}

// instance is one topolayer run of the scale test.
type instance struct {
	ns        string
	cmd       *exec.Cmd
	started   time.Time
	converged time.Duration
}

// runScale runs section 5.
func (h *harness) runScale(ctx context.Context) error {
	const sec = "5 scale"
	n := scaleInstances
	if h.quick {
		n = 10
	}
	h.logf("== 5. scale: %d HCP namespaces, one topolayer run each", n)
	env := &cluster.Environment{Topology: config.Hosted, AssetsDir: h.assets}
	if err := env.Start(ctx); err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			h.logf("%v", err)
		}
	}()
	kubeDir := filepath.Join(h.scratch, "scale")
	if err := env.WriteKubeconfigs(kubeDir); err != nil {
		return fmt.Errorf("kubeconfigs: %w", err)
	}
	mgmtCfg, guestCfg := harnessConfig(env.Config(cluster.Management)), harnessConfig(env.Config(cluster.Guest))
	mgmt, err := client.New(mgmtCfg, client.Options{})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	guest, err := client.New(guestCfg, client.Options{})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	// The guest is shared by every instance (one guest server per hosted cluster would be
	// 100 more API servers): the user's input, once.
	if err := guest.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-config"}}); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("guest: %w", err)
	}
	if err := guest.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sample-settings", Namespace: "openshift-config"}, Data: map[string]string{"replicas": "2"}}); err != nil {
		return fmt.Errorf("guest: sample-settings: %w", err)
	}
	var insts []*instance
	for i := range n {
		ns := fmt.Sprintf("clusters-bench-%03d", i)
		if err := createHCP(ctx, env, mgmt, ns); err != nil {
			return err
		}
		insts = append(insts, &instance{ns: ns})
	}
	h.logf("%d HCP namespaces created", n)

	logDir := filepath.Join(h.scratch, "logs", "scale")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	memBefore := procMeminfo("MemAvailable")
	m0, g0, err := scaleCounts(ctx, mgmtCfg, guestCfg)
	if err != nil {
		return err
	}
	// The first instance serves Go's profiles, to show where an idle instance's memory goes.
	pprofAddr, err := freeLocalAddress()
	if err != nil {
		return err
	}
	start := time.Now()
	sampler := newMemSampler(time.Second)
	var cmds []*exec.Cmd
	defer func() { stopAll(cmds) }()
	for w := 0; w < n; w += scaleWave {
		wave := insts[w:min(w+scaleWave, n)]
		for _, in := range wave {
			cfgFile, err := h.scaleConfig(in.ns)
			if err != nil {
				return err
			}
			args := []string{h.bin("topolayer"), "run", "--config", cfgFile,
				"--management-kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Management),
				"--guest-kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Guest), "--metrics-bind-address", "0"}
			if in == insts[0] {
				h.rep.command(append(slices.Clone(args), "# and 99 more, one per HCP namespace, in waves of 10")...)
				args = append(args, "--pprof-bind-address", pprofAddr)
			}
			in.started = time.Now()
			if in.cmd, err = startLogged(args, filepath.Join(logDir, in.ns+".log"), nil); err != nil {
				return err
			}
			cmds = append(cmds, in.cmd)
			sampler.add(in.cmd.Process.Pid)
		}
		if err := waitConverged(ctx, mgmt, wave, 3*time.Minute); err != nil {
			return fmt.Errorf("wave %d: %w (logs in %s)", w/scaleWave, err, logDir)
		}
		h.logf("wave %d: %d instances converged, %s since the first start; MemAvailable %.1f GiB", w/scaleWave, min(w+scaleWave, n), time.Since(start).Round(time.Second), mib(procMeminfo("MemAvailable"))/1024)
	}
	total := time.Since(start)
	m1, g1, err := scaleCounts(ctx, mgmtCfg, guestCfg)
	if err != nil {
		return err
	}
	// Idle: settle, then one minute.
	time.Sleep(20 * time.Second)
	i0, ig0, err := scaleCounts(ctx, mgmtCfg, guestCfg)
	if err != nil {
		return err
	}
	const idle = time.Minute
	time.Sleep(idle)
	i1, ig1, err := scaleCounts(ctx, mgmtCfg, guestCfg)
	if err != nil {
		return err
	}
	var rss, hwm, pss, anon []int64
	alive := 0
	for _, in := range insts {
		if exited(in.cmd.Process.Pid) {
			continue
		}
		alive++
		rss = append(rss, proctree.StatusBytes(in.cmd.Process.Pid, "VmRSS"))
		hwm = append(hwm, proctree.StatusBytes(in.cmd.Process.Pid, "VmHWM"))
		pss = append(pss, proctree.SmapsBytes(in.cmd.Process.Pid, "Pss"))
		anon = append(anon, proctree.StatusBytes(in.cmd.Process.Pid, "RssAnon"))
	}
	slices.Sort(rss)
	slices.Sort(hwm)
	slices.Sort(pss)
	slices.Sort(anon)
	profile := idleProfile(ctx, pprofAddr)
	mem := sampler.finish()
	var conv []time.Duration
	for _, in := range insts {
		conv = append(conv, in.converged)
	}
	slices.Sort(conv)

	fn := float64(n)
	h.rep.add(sec, fmt.Sprintf("time to converge, all %d instances (waves of %d)", n, scaleWave), total.Round(time.Second).String(), "first start to the last instance's both operators Succeeded")
	h.rep.add(sec, "time to converge per instance, p50 / max", fmt.Sprintf("%s / %s", pct(conv, 50).Round(time.Millisecond), conv[len(conv)-1].Round(time.Millisecond)), "its start to both status ConfigMaps Succeeded")
	h.rep.add(sec, "requests per instance to converge, management + guest", fmt.Sprintf("%.0f + %.0f", (m1-m0)/fn, (g1-g0)/fn), "apiserver_request_total deltas / instances; the harness's polling included")
	h.rep.add(sec, "idle requests per instance per minute, management + guest", fmt.Sprintf("%.1f + %.1f", (i1-i0)/fn/idle.Minutes(), (ig1-ig0)/fn/idle.Minutes()), "both API servers' own background included")
	medRSS, medPSS := rss[len(rss)/2], pss[len(pss)/2]
	h.rep.target(sec, "idle memory per instance (PSS), median (p90, max)", fmt.Sprintf("%.1f MiB (%.1f, %.1f)", mib(medPSS), mib(pss[len(pss)*9/10]), mib(pss[len(pss)-1])), "≤ 40 MiB", mib(medPSS) <= 40,
		fmt.Sprintf("Pss of /proc/<pid>/smaps_rollup after %s idle, %d of %d alive: what each instance adds, the pages of the one binary all share counted once among them", idle, alive, n))
	h.rep.add(sec, "idle RSS per instance, median (p90, max); its anonymous part, median", fmt.Sprintf("%.1f MiB (%.1f, %.1f); %.1f MiB", mib(medRSS), mib(rss[len(rss)*9/10]), mib(rss[len(rss)-1]), mib(anon[len(anon)/2])),
		fmt.Sprintf("VmRSS and RssAnon: VmRSS counts in every instance the %s binary's pages that all of them share", binarySize(h.bin("topolayer"))))
	h.rep.add(sec, "peak RSS per instance (VmHWM), median / max", fmt.Sprintf("%.1f / %.1f MiB", mib(hwm[len(hwm)/2]), mib(hwm[len(hwm)-1])), "")
	h.rep.add(sec, "peak total RSS of all instances and their operator runs", fmt.Sprintf("%.0f MiB; machine MemAvailable %.1f → %.1f GiB", mib(mem.PeakBytes), mib(memBefore)/1024, mib(procMeminfo("MemAvailable"))/1024), "")
	h.rep.section("5. Scale", fmt.Sprintf(`
One hosted environment (e2e/cluster: a management and a guest kube-apiserver). On the management server, %d HCP namespaces clusters-bench-000 ... each with its pull secret, HostedControlPlane object and the shadow of the sample operator's CR; on the guest, openshift-config/sample-settings. One `+"`topolayer run`"+` process per HCP namespace (both sample operators, debounce 1s, cooldown 2s, leader election on, metrics off), started in waves of %d: a wave starts when the previous one converged, so the 2 cores are not asked to start 100 managers at once. All instances share the one guest server, so they all read openshift-config there and write the same guest ClusterRole (idempotent server-side applies); a real fleet has one guest per hosted cluster.

Converged: both status ConfigMaps of the instance (topolayer-sample-operator, topolayer-sample-audit-operator) in its HCP namespace say Succeeded, checked with one LIST per second by the harness.

Where an idle instance's memory goes: the first instance, after the idle minute (its runtime's memory statistics, then the Go heap by allocation site, `+"`go tool pprof -top -sample_index=inuse_space`"+` of its /debug/pprof/heap, served by `+"`--pprof-bind-address`"+`):

`+"```"+`
%s
`+"```"+``, n, scaleWave, profile))
	return nil
}

// freeLocalAddress returns a loopback address with a port free now.
func freeLocalAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// idleProfile returns the runtime memory statistics of the instance serving Go's profiles at
// addr and the top of its heap profile, or why there are none.
func idleProfile(ctx context.Context, addr string) string {
	url := "http://" + addr + "/debug/pprof/heap"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"?debug=1", nil)
	if err != nil {
		return err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Sprintf("no profile: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Sprintf("no profile: %v", err)
	}
	var stats []string
	for _, line := range strings.Split(string(body), "\n") {
		for _, k := range []string{"# Sys ", "# HeapSys ", "# HeapInuse ", "# HeapIdle ", "# HeapReleased ", "# Stack ", "# MSpan ", "# GCSys ", "# OtherSys ", "# NumGC "} {
			if strings.HasPrefix(line, k) {
				stats = append(stats, strings.TrimPrefix(line, "# "))
			}
		}
	}
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=15", url).Output()
	if err != nil {
		top = []byte(fmt.Sprintf("go tool pprof: %v", err))
	}
	return strings.Join(stats, "\n") + "\n\n" + strings.TrimSpace(string(top))
}

// scaleConfig writes the configuration of one instance.
func (h *harness) scaleConfig(ns string) (string, error) {
	cfg := fmt.Sprintf(`apiVersion: topolayer.dev/v1alpha1
kind: TopologyConfig
topology:
  type: Hosted
  hosted: {namespace: %s, hostedControlPlane: example}
scheduler: {debounce: 1s, cooldown: 2s, maxConcurrent: 2}
operators:
- name: sample-operator
  command: [%s]
  env: {SAMPLE_IMAGE: "registry.example/sample:demo"}
  limits: {timeout: 1m}
- name: sample-audit-operator
  command: [%s]
  limits: {timeout: 1m}
`, ns, h.bin("sample-operator"), h.bin("sample-audit-operator"))
	path := filepath.Join(h.scratch, "scale", ns+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return "", fmt.Errorf("configuration: %w", err)
	}
	return path, nil
}

// createHCP creates a hosted control plane as e2e/cluster creates its own (namespace, pull
// secret, root-ca with the guest's CA, HostedControlPlane object) and the shadow of the
// sample operator's CR in it.
func createHCP(ctx context.Context, env *cluster.Environment, c client.Client, ns string) error {
	if err := env.CreateHostedControlPlane(ctx, config.HostedTopology{Namespace: ns, HostedControlPlane: "example"}); err != nil {
		return fmt.Errorf("HCP namespace %s: %w", ns, err)
	}
	sample := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"managementState": "Managed"}}}
	sample.SetGroupVersionKind(sampleShadow)
	sample.SetNamespace(ns)
	sample.SetName("cluster")
	if err := c.Create(ctx, sample); err != nil {
		return fmt.Errorf("HCP namespace %s: create the sample CR's shadow: %w", ns, err)
	}
	return nil
}

// waitConverged waits until every instance of wave has both status ConfigMaps Succeeded.
func waitConverged(ctx context.Context, c client.Client, wave []*instance, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var cms corev1.ConfigMapList
		if err := c.List(ctx, &cms, client.MatchingLabels{manager.LabelStatus: "true"}); err != nil {
			return fmt.Errorf("status objects: %w", err)
		}
		ok := map[string]int{}
		for _, cm := range cms.Items {
			if cm.Data["result"] == manager.ResultSucceeded {
				ok[cm.Namespace]++
			}
		}
		left := 0
		for _, in := range wave {
			if in.converged == 0 && ok[in.ns] >= 2 {
				in.converged = time.Since(in.started)
			}
			if in.converged == 0 {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var names []string
			for _, in := range wave {
				if in.converged == 0 {
					names = append(names, in.ns)
				}
			}
			return fmt.Errorf("%d instances did not converge in %s: %s", left, timeout, strings.Join(names, " "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// scaleCounts returns apiserver_request_total of the management and the guest server.
func scaleCounts(ctx context.Context, mgmt, guest *rest.Config) (float64, float64, error) {
	m, err := scrape(ctx, mgmt)
	if err != nil {
		return 0, 0, fmt.Errorf("management: %w", err)
	}
	g, err := scrape(ctx, guest)
	if err != nil {
		return 0, 0, fmt.Errorf("guest: %w", err)
	}
	return promtext.Sum(m, "apiserver_request_total", nil), promtext.Sum(g, "apiserver_request_total", nil), nil
}

// binarySize describes the size of a file, for the report.
func binarySize(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "topolayer"
	}
	return fmt.Sprintf("%.0f MiB", mib(fi.Size()))
}
