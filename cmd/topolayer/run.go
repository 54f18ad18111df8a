package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/topology"
)

// RunOptions are the options of `topolayer run`.
type RunOptions struct {
	ConfigFile string
	ClusterOptions
	MetricsAddress string
	ProbeAddress   string
	PprofAddress   string // --pprof-bind-address
	LeaderElect    bool
	WorkDir        string
	Verbosity      int
	LogFormat      string // --log-format: console or json

	topo     *topology.Topology      // set by Complete
	clusters map[string]*rest.Config // set by Complete, by cluster name
	IOStreams
}

// NewCmdRun builds `topolayer run`.
func NewCmdRun(streams IOStreams) *cobra.Command {
	o := &RunOptions{IOStreams: streams, LeaderElect: true, LogFormat: "console"}
	cmd := &cobra.Command{
		Annotations: map[string]string{cli.AnnotationDaemon: "true"},
		Use:         "run --config FILE (--kubeconfig FILE | --management-kubeconfig FILE --guest-kubeconfig FILE)",
		Short:       "Run the configured operators whenever their inputs change, and apply their outputs",
		Long: `run is the multi-operator manager: one process, one set of informers over the union of
the configured operators' inputs. When an input changes, the operators that read it run
offline (their apply-configuration command, in a sandbox, against an input directory
gathered from the caches), and their outputs are translated for the topology and applied.
Runs are debounced, limited in concurrency, cooled down, budgeted and damped when an
operator loops (see the scheduler section of the configuration).

Each operator's last run is in the ConfigMap topolayer-<operator> of the HCP namespace
(hosted) or of manager.namespace (standalone), with events; Prometheus metrics are served
on --metrics-bind-address. With leader election (default), one replica runs at a time; the
Lease is in the same namespace. SIGINT or SIGTERM stops it after the runs in progress.

Hosted, with the hypershift profile, the HostedControlPlane of topology.hosted is read from
the management cluster before the first run and watched: what the profile reads of it
(availability policy, node selector, tolerations, labels, annotations, release image,
platform, networks, proxy, additional trust bundle) is what plan --hosted-control-plane
FILE reads offline. When it changes, every operator runs again (trigger
hosted-control-plane); while it cannot be read, nothing is applied and the status objects
say why.`,
		Example: `  # The hosted dev environment (topolayer-devenv up --dir /tmp/dev):
  topolayer run --config examples/hosted-demo.yaml \
    --management-kubeconfig /tmp/dev/management.kubeconfig --guest-kubeconfig /tmp/dev/guest.kubeconfig

  # One cluster:
  topolayer run --config examples/standalone-demo.yaml --kubeconfig /tmp/dev/cluster.kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			return o.Run(cmd)
		},
	}
	cmd.Flags().StringVar(&o.ConfigFile, "config", "", "topology configuration file")
	addClusterFlags(cmd, &o.ClusterOptions)
	cmd.Flags().StringVar(&o.MetricsAddress, "metrics-bind-address", "", `address of the Prometheus metrics endpoint (default: manager.metricsAddress of the configuration, else 127.0.0.1:8080, loopback only; ":8080" serves every interface; "0" turns it off)`)
	cmd.Flags().StringVar(&o.LogFormat, "log-format", "console", "log format on stderr: console (for a person) or json (one object a line, for a log collector)")
	cmd.Flags().StringVar(&o.ProbeAddress, "health-probe-bind-address", "0", `address of the /healthz and /readyz endpoints ("0" turns them off)`)
	cmd.Flags().StringVar(&o.PprofAddress, "pprof-bind-address", "0", `address of Go's /debug/pprof endpoints, to see where memory and CPU go (for example 127.0.0.1:6060; "0" turns them off)`)
	cmd.Flags().BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader with a Lease, so that one replica runs at a time (also manager.leaderElection)")
	cmd.Flags().StringVar(&o.WorkDir, "work-dir", "", "directory of the runs' input and output directories (default: manager.workDir, else a temporary directory removed when it stops)")
	cmd.Flags().IntVarP(&o.Verbosity, "v", "v", 0, "log verbosity")
	return cmd
}

// Complete loads the configuration and checks the flags against its topology.
func (o *RunOptions) Complete() error {
	if o.AsServiceAccount != "" {
		return cli.AsUsage(errors.New("--as-service-account: run impersonates each operator's serviceAccount from the configuration instead"))
	}
	if err := errors.Join(append(requiredFlags([]flagValue{{"--config", o.ConfigFile}}), o.validate())...); err != nil {
		return cli.AsUsage(err)
	}
	if _, err := newLogger(o.ErrOut, o.LogFormat, o.Verbosity); err != nil {
		return err
	}
	cfg, err := config.Load(o.ConfigFile)
	if err != nil {
		return err
	}
	topo, err := topology.New(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", o.ConfigFile, err)
	}
	if o.clusters, err = o.configs(topo); err != nil {
		return fmt.Errorf("%s: %w", o.ConfigFile, err)
	}
	if len(cfg.Operators) == 0 {
		return fmt.Errorf("%s: operators: no operator to run", o.ConfigFile)
	}
	o.topo = topo
	return nil
}

// Run starts the manager and blocks until the command's context is done.
func (o *RunOptions) Run(cmd *cobra.Command) error {
	ctx := cmd.Context()
	log, err := newLogger(o.ErrOut, o.LogFormat, o.Verbosity)
	if err != nil {
		return err
	}
	ctrl.SetLogger(log)
	ctx = ctrl.LoggerInto(ctx, log)
	topo := o.topo
	cfg := topo.Config()

	ops := manager.OperatorsFromConfig(cfg, filepath.Dir(o.ConfigFile))
	metricsAddr := o.MetricsAddress
	if metricsAddr == "" {
		metricsAddr = cfg.Manager.MetricsAddress
	}
	workDir := o.WorkDir
	if workDir == "" {
		workDir = cfg.Manager.WorkDir
	}
	mopts, decl, err := manager.HomeOptions(ctx, topo, ops, o.LeaderElect && *cfg.Manager.LeaderElection)
	if err != nil {
		return err
	}
	mopts.Metrics = metricsserver.Options{BindAddress: metricsAddr}
	mopts.HealthProbeBindAddress = o.ProbeAddress
	mopts.PprofBindAddress = o.PprofAddress
	mgr, err := ctrl.NewManager(o.clusters[topo.Home()], mopts)
	if err != nil {
		return err
	}
	if _, err := manager.AddToManager(ctx, mgr, manager.EmbedOptions{
		Topology: topo, Clusters: o.clusters, Operators: ops, Declarations: decl, WorkDir: workDir,
	}); err != nil {
		return err
	}
	return o.start(ctx, mgr)
}

func (o *RunOptions) start(ctx context.Context, mgr ctrl.Manager) error {
	if o.ProbeAddress != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}

// newLogger is run's logger on w: zap, as controller-runtime's, with its console encoder
// (time, level, logger, message, then the values as JSON) or its JSON encoder; -v raises
// the verbosity.
func newLogger(w io.Writer, format string, verbosity int) (logr.Logger, error) {
	var encoder zap.Opts
	switch format {
	case "console":
		encoder = zap.ConsoleEncoder()
	case "json":
		encoder = zap.JSONEncoder()
	default:
		return logr.Discard(), cli.UsageErrorf("--log-format %q: must be console or json", format)
	}
	return zap.New(zap.WriteTo(w), zap.Level(zapLevel(verbosity)), encoder), nil
}

// zapLevel maps -v to a zap level: 0 info, 1 and more debug levels.
func zapLevel(v int) zapcore.Level { return zapcore.Level(-v) }
