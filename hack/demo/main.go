package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/e2e/promtext"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/parity"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// The sample operators the demo runs, as examples/*-demo.yaml name them.
var operators = []string{"sample-operator", "sample-audit-operator"}

func main() {
	bin := flag.String("bin", "bin", "the directory of the topolayer and sample operator binaries (make build)")
	examples := flag.String("examples", "examples", "the examples directory (hosted-demo.yaml, standalone-demo.yaml)")
	details := flag.Bool("details", false, "show every object and difference of the parity section, not only its summary")
	flag.Parse()
	// envtest (installing the CRDs) and client-go log through controller-runtime and klog:
	// without a logger, controller-runtime prints a stack trace asking for one. The demo
	// reports every failure itself.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &demo{bin: *bin, examples: *examples, details: *details, out: os.Stdout, start: time.Now()}
	err := d.run(ctx)
	if cerr := d.cleanup(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo is one run of the demo: its environments, processes and scratch directory.
type demo struct {
	bin, examples string
	details       bool // -details: the whole parity report of each operator
	out           io.Writer
	start         time.Time

	work      string
	envs      []*cluster.Environment
	processes []*exec.Cmd
	peak      *peakRSS
}

// topologyRun is what the demo knows of one topology's run.
// kubeconfigFlag is topolayer's kubeconfig flag of each cluster.
var kubeconfigFlag = map[string]string{cluster.Single: "kubeconfig", cluster.Management: "management-kubeconfig", cluster.Guest: "guest-kubeconfig"}

type topologyRun struct {
	name    string // hosted or standalone
	cfg     *config.TopologyConfig
	topo    *topology.Topology
	cfgFile string
	env     *cluster.Environment
	work    string // topolayer run's --work-dir
	plans   map[string]*plans.Plan
	engines map[string]translate.Engine
}

func (d *demo) run(ctx context.Context) error {
	var err error
	if d.work, err = os.MkdirTemp("", "topolayer-demo-"); err != nil {
		return err
	}
	d.peak = watchPeakRSS(ctx, os.Getpid())
	for _, b := range append([]string{"topolayer"}, operators...) {
		if _, err := os.Stat(filepath.Join(d.bin, b)); err != nil {
			return fmt.Errorf("%w (run make build first)", err)
		}
	}

	d.section("Local API servers: a management and a guest cluster (hosted), and one cluster (standalone)")
	assets, err := cluster.AssetsDir(ctx, os.Stderr)
	if err != nil {
		return err
	}
	hostedRun := &topologyRun{name: "hosted", cfgFile: filepath.Join(d.examples, "hosted-demo.yaml")}
	standaloneRun := &topologyRun{name: "standalone", cfgFile: filepath.Join(d.examples, "standalone-demo.yaml")}
	for _, r := range []*topologyRun{hostedRun, standaloneRun} {
		if r.cfg, err = config.Load(r.cfgFile); err != nil {
			return err
		}
		if r.topo, err = topology.New(r.cfg); err != nil {
			return err
		}
		r.env = &cluster.Environment{Topology: r.cfg.Topology.Type, TopologyConfig: r.cfg, AssetsDir: assets}
		d.envs = append(d.envs, r.env)
	}
	errs := make(chan error, 2)
	for _, r := range []*topologyRun{hostedRun, standaloneRun} {
		go func() { errs <- r.env.Start(ctx) }()
	}
	if err := errors.Join(<-errs, <-errs); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "ready in %s: %s\n", time.Since(d.start).Round(100*time.Millisecond), strings.Join(serverHosts(hostedRun.env, standaloneRun.env), ", "))

	for _, r := range []*topologyRun{hostedRun, standaloneRun} {
		if err := d.runTopology(ctx, r); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
	}

	d.section("Parity: the standalone and the hosted final state, object by object")
	fmt.Fprintln(d.out, "The operators read their inputs where each topology keeps them (gathered back into standalone form),")
	fmt.Fprintln(d.out, "so they computed the same outputs in both runs:")
	for _, op := range operators {
		same, timed, differ, err := sameOutputs(filepath.Join(hostedRun.work, op, manager.LastSucceeded, "output"), filepath.Join(standaloneRun.work, op, manager.LastSucceeded, "output"))
		if err != nil {
			return err
		}
		fmt.Fprintf(d.out, "  %-22s %d mutations identical, %d identical but for the run's clock (condition times), %d different\n", op, same, timed, len(differ))
		if len(differ) > 0 {
			return fmt.Errorf("%s computed different outputs in the two topologies: %s", op, strings.Join(differ, ", "))
		}
	}
	fmt.Fprintln(d.out, "What each topology makes of those outputs, every difference attributed to the rule or transform that made it")
	if !d.details {
		fmt.Fprintln(d.out, "(per cause: each rule, with the number of objects it changed; -details or topolayer parity -o wide shows every difference):")
	}
	for _, op := range operators {
		output := filepath.Join(hostedRun.work, op, manager.LastSucceeded, "output")
		standalonePlan, _, err := planOf(standaloneRun.cfg, op, output, filepath.Join(d.work, op+"-output-resources.yaml"))
		if err != nil {
			return err
		}
		report, err := parity.Compare(standalonePlan, hostedRun.plans[op], parity.OptionsFor(hostedRun.engines[op]))
		if err != nil {
			return err
		}
		if d.details {
			fmt.Fprintf(d.out, "\n-- %s\n", op)
			if err := report.WriteTable(d.out); err != nil {
				return err
			}
		} else {
			writeParitySummary(d.out, report)
		}
		if err := report.Err(); err != nil {
			return err
		}
	}

	d.section("Done")
	fmt.Fprintf(d.out, "elapsed %s, peak memory %s (the demo, its API servers and etcd, topolayer and the operators)\n",
		time.Since(d.start).Round(100*time.Millisecond), mib(d.peak.Peak()))
	return nil
}

// runTopology runs both sample operators through topolayer run in one topology, as a user
// would: a settings ConfigMap written where the topology's users write it, topolayer run
// until nothing is left to do, then the plan of the last runs and what landed where.
func (d *demo) runTopology(ctx context.Context, r *topologyRun) error {
	r.work = filepath.Join(d.work, r.name+"-runs")
	kube := filepath.Join(d.work, r.name+"-kubeconfigs")
	if err := r.env.WriteKubeconfigs(kube); err != nil {
		return err
	}
	// The users of a topology edit its last cluster: the guest, or the one cluster.
	var args []string
	for _, c := range r.topo.Clusters() {
		args = append(args, "--"+kubeconfigFlag[c], cluster.KubeconfigFile(kube, c))
	}
	userCluster := r.topo.Clusters()[len(r.topo.Clusters())-1]

	d.section(fmt.Sprintf("%s: topolayer run --config %s", strings.ToUpper(r.name[:1])+r.name[1:], r.cfgFile))
	cs, err := kubernetes.NewForConfig(r.env.Config(userCluster))
	if err != nil {
		return err
	}
	settings := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "sample-settings", Namespace: cluster.Installed.ConfigNamespace},
		Data:       map[string]string{"replicas": "2", "message": "hello from the demo"},
	}
	if _, err := cs.CoreV1().ConfigMaps(settings.Namespace).Create(ctx, settings, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	fmt.Fprintf(d.out, "a user writes ConfigMap openshift-config/sample-settings (replicas: 2) on the %s cluster\n", userCluster)

	metricsAddr, err := freeAddress()
	if err != nil {
		return err
	}
	logFile := filepath.Join(d.work, r.name+"-topolayer-run.log")
	log, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer log.Close()
	run := exec.Command(filepath.Join(d.bin, "topolayer"), append([]string{"run", "--config", r.cfgFile, "--work-dir", r.work, "--metrics-bind-address", metricsAddr, "--health-probe-bind-address", "0"}, args...)...)
	run.Stdout, run.Stderr = log, log
	if err := run.Start(); err != nil {
		return err
	}
	d.processes = append(d.processes, run)
	started := time.Now()
	if err := waitConverged(ctx, "http://"+metricsAddr+"/metrics", run); err != nil {
		return fmt.Errorf("%w (log: %s)", err, logFile)
	}
	fmt.Fprintf(d.out, "topolayer run converged in %s: both operators ran, their outputs applied, nothing left to do\n", time.Since(started).Round(100*time.Millisecond))
	if err := stopProcess(run); err != nil {
		return fmt.Errorf("stop topolayer run: %w (log: %s)", err, logFile)
	}

	r.plans, r.engines = map[string]*plans.Plan{}, map[string]translate.Engine{}
	for _, op := range operators {
		output := filepath.Join(r.work, op, manager.LastSucceeded, "output")
		declared := filepath.Join(d.work, op+"-output-resources.yaml")
		if err := d.declarations(op, declared); err != nil {
			return err
		}
		if len(r.topo.Clusters()) > 1 { // the hosted plan is the one worth reading
			fmt.Fprintf(d.out, "\n$ topolayer plan --config %s --from <%s's last output> --operator %s\n", r.cfgFile, op, op)
			plan := exec.CommandContext(ctx, filepath.Join(d.bin, "topolayer"), "plan", "--config", r.cfgFile, "--from", output, "--output-resources", declared, "--operator", op)
			plan.Stdout, plan.Stderr = d.out, os.Stderr
			if err := plan.Run(); err != nil {
				return fmt.Errorf("topolayer plan: %w", err)
			}
		}
		if r.plans[op], r.engines[op], err = planOf(r.cfg, op, output, declared); err != nil {
			return err
		}
	}

	fmt.Fprintf(d.out, "\nWhat landed where (read back from the live servers):\n")
	return d.landed(ctx, r)
}

// declarations writes the output-resources of op, as the operator prints them, to file.
func (d *demo) declarations(op, file string) error {
	out, err := exec.Command(filepath.Join(d.bin, op), "output-resources").Output()
	if err != nil {
		return fmt.Errorf("%s output-resources: %w", op, err)
	}
	return os.WriteFile(file, out, 0o644)
}

// planOf translates an operator's output directory for the configuration's topology.
func planOf(cfg *config.TopologyConfig, op, output, declaredFile string) (*plans.Plan, translate.Engine, error) {
	data, err := os.ReadFile(declaredFile)
	if err != nil {
		return nil, translate.Engine{}, err
	}
	declared, err := contract.ParseOutputResources(data)
	if err != nil {
		return nil, translate.Engine{}, fmt.Errorf("%s: %w", declaredFile, err)
	}
	engine, err := topology.Engine(cfg, op, declared)
	if err != nil {
		return nil, translate.Engine{}, err
	}
	out, err := contract.ReadOutputDir(output, contract.ReadOptions{})
	if err != nil {
		return nil, translate.Engine{}, err
	}
	return engine.Plan(out), engine, nil
}

// landed lists, for every object the last plans applied, where it is on the live servers.
func (d *demo) landed(ctx context.Context, r *topologyRun) error {
	tw := tabwriter.NewWriter(d.out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  CLUSTER\tNAMESPACE\tRESOURCE\tNAME\tOPERATOR\tLIVE")
	clients := map[string]*dynamic.DynamicClient{}
	missing := 0
	for _, op := range operators {
		for _, e := range r.plans[op].Entries {
			if e.Disposition != routing.Apply || e.Mutation == nil || e.Action.IsStatus() || e.Source.IsEvent() {
				continue
			}
			c := clients[e.Target.Cluster]
			if c == nil {
				var err error
				if c, err = dynamic.NewForConfig(r.env.Config(e.Target.Cluster)); err != nil {
					return err
				}
				clients[e.Target.Cluster] = c
			}
			id := e.Target.Identity
			gvr := schema.GroupVersionResource{Group: id.Group, Version: id.Version, Resource: id.Resource}
			var ri dynamic.ResourceInterface = c.Resource(gvr)
			if id.Namespace != "" {
				ri = c.Resource(gvr).Namespace(id.Namespace)
			}
			live := "yes"
			if _, err := ri.Get(ctx, id.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				live, missing = "MISSING", missing+1
			} else if err != nil {
				return err
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", e.Target.Cluster, orDash(id.Namespace), id.GroupResource(), id.Name, op, live)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if missing > 0 {
		return fmt.Errorf("%d objects of the last plans are not on the servers", missing)
	}
	return nil
}

// cleanup stops what the demo started and removes its data.
func (d *demo) cleanup() error {
	var errs []error
	for _, p := range d.processes {
		if err := stopProcess(p); err != nil {
			errs = append(errs, err)
		}
	}
	for _, env := range d.envs {
		if err := env.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if d.work != "" {
		errs = append(errs, os.RemoveAll(d.work))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintln(d.out, "stopped the API servers and topolayer; removed the demo's data")
	return nil
}

func (d *demo) section(title string) {
	fmt.Fprintf(d.out, "\n== %s\n", title)
}

// waitConverged waits until the operators of a topolayer run have all had their first run
// and its scheduler has been idle (nothing running, nothing due) for 3s.
func waitConverged(ctx context.Context, metricsURL string, run *exec.Cmd) error {
	var idleSince time.Time
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		if run.ProcessState != nil {
			return false, errors.New("topolayer run exited")
		}
		m, err := scrape(metricsURL)
		if err != nil {
			return false, nil // not up yet
		}
		ran := true
		for _, op := range operators {
			ran = ran && m.sum("topolayer_operator_runs_total", "operator", op) > 0
		}
		if failed := m.sum("topolayer_operator_runs_total", "result", manager.ResultRejected); failed > 0 {
			return false, errors.New("an operator's outputs were rejected")
		}
		if !ran || m.sum("topolayer_scheduler_running", "", "")+m.sum("topolayer_scheduler_queue_depth", "", "") > 0 {
			idleSince = time.Time{}
			return false, nil
		}
		if idleSince.IsZero() {
			idleSince = time.Now()
		}
		return time.Since(idleSince) >= 3*time.Second, nil
	})
}

// metricValues are the samples of a metrics endpoint.
type metricValues struct{ families map[string]*dto.MetricFamily }

func scrape(url string) (*metricValues, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	families, err := promtext.Parse(body)
	if err != nil {
		return nil, err
	}
	return &metricValues{families: families}, nil
}

// sum adds up the samples of a counter or gauge whose label has value ("" label: all).
func (m *metricValues) sum(name, label, value string) float64 {
	var labels map[string]string
	if label != "" {
		labels = map[string]string{label: value}
	}
	return promtext.Sum(m.families, name, labels)
}

// stopProcess ends a process with SIGTERM (SIGKILL after 30s) and waits for it.
func stopProcess(p *exec.Cmd) error {
	if p.ProcessState != nil {
		return nil
	}
	_ = p.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		_ = p.Process.Kill()
		<-done
		return fmt.Errorf("%s did not stop within 30s of SIGTERM", filepath.Base(p.Path))
	}
}

func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func serverHosts(envs ...*cluster.Environment) []string {
	var out []string
	for _, env := range envs {
		for _, name := range env.Clusters() {
			out = append(out, name+" "+env.Config(name).Host)
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
