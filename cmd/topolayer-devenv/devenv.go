package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// NewRootCommand builds the topolayer-devenv command tree: up and down (and serve, hidden,
// which up runs in the background).
func NewRootCommand(streams IOStreams) *cobra.Command {
	cmd := cli.Root(&cobra.Command{
		Use:   "topolayer-devenv",
		Short: "Run local API servers to try topolayer on: a management and a guest cluster, or one cluster",
		Long: `topolayer-devenv runs real kube-apiservers and etcd on loopback, in the background, and
writes a kubeconfig for each, so that topolayer (and kubectl) can be tried without a cluster.
It is a development tool, apart from topolayer so that topolayer does not carry envtest.

Hosted (the default): a management server with the HostedControlPlane CRD, the shadow CRDs
of the openshift/api cluster-scoped CRDs, the HCP namespace and its HostedControlPlane object
(named by --config, clusters-example/example by default); and a guest server with the
openshift/api CRDs. Standalone: one server with the openshift/api CRDs.

The binaries are built from the Go module proxy by hack/envtest-assets.sh the first time
(several minutes), unless KUBEBUILDER_ASSETS names them.

` + exitCodesHelp,
	}, streams)
	cmd.AddCommand(newCmdUp(streams), newCmdDown(streams), newCmdServe(streams))
	cli.MarkUsageErrors(cmd, nil)
	return cmd
}

// UpOptions are the options of `topolayer-devenv up`.
type UpOptions struct {
	Dir        string        // --dir
	Topology   string        // --topology: hosted or standalone
	ConfigFile string        // --config
	Timeout    time.Duration // --timeout
	OAuthAPIs  bool          // --oauth-apis

	oauthAPIServer string                 // set by Complete when OAuthAPIs: the binary
	dir            string                 // set by Complete: Dir, absolute
	configFile     string                 // set by Complete: ConfigFile, absolute
	topology       config.TopologyType    // set by Complete
	cfg            *config.TopologyConfig // set by Complete, when --config is given
	serve          []string               // set by Complete: how to run serve (executable, args)

	IOStreams
}

func newCmdUp(streams IOStreams) *cobra.Command {
	o := &UpOptions{Timeout: 2 * time.Minute, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "up --dir DIR [--topology hosted|standalone] [--config FILE]",
		Short: "Start the API servers in the background and write their kubeconfigs to DIR",
		Long: `Up starts the API servers of the chosen topology in a detached background process, which
outlives this command, and returns once they serve their CRDs. DIR then holds
management.kubeconfig and guest.kubeconfig (standalone: cluster.kubeconfig), the log
devenv.log, and the servers' data. Stop them with down.`,
		Example: `  # A hosted environment as examples/hosted.yaml names it
  topolayer-devenv up --dir /tmp/devenv --config examples/hosted.yaml
  kubectl --kubeconfig /tmp/devenv/management.kubeconfig get hostedcontrolplanes -A
  kubectl --kubeconfig /tmp/devenv/guest.kubeconfig get crd authentications.operator.openshift.io
  topolayer-devenv down --dir /tmp/devenv

  # One standalone cluster
  topolayer-devenv up --dir /tmp/standalone --topology standalone

  # A guest users log in to: the OAuth APIs served by the real OAuth API server
  # (TOPOLAYER_OPERATORS names the folder of ../shared/operators unpacked)
  topolayer-devenv up --dir /tmp/devenv --oauth-apis
  kubectl --kubeconfig /tmp/devenv/guest.kubeconfig get users.user.openshift.io`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE:         cli.RunCommand(o),
	}
	cmd.Flags().StringVar(&o.Dir, "dir", o.Dir, "directory for the kubeconfigs, the log and the servers' data (created if needed)")
	cmd.Flags().StringVar(&o.Topology, "topology", o.Topology, "hosted or standalone (default: --config's topology, else hosted)")
	cmd.Flags().StringVar(&o.ConfigFile, "config", o.ConfigFile, "topology configuration naming the HCP namespace and HostedControlPlane (default: clusters-example/example)")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "how long to wait for the servers, once the binaries are built")
	cmd.Flags().BoolVar(&o.OAuthAPIs, "oauth-apis", o.OAuthAPIs, "serve the OAuth APIs on the guest (standalone: the cluster) as OpenShift does, with the real oauth-apiserver binary in $"+cluster.OperatorsEnv+"; every cluster then keeps an audit log, DIR/data/<cluster>/oauth-apis/audit.log")
	return cmd
}

// Complete makes the paths absolute, reads --config and resolves the topology.
func (o *UpOptions) Complete() error {
	var err error
	if o.Dir != "" {
		if o.dir, err = filepath.Abs(o.Dir); err != nil {
			return fmt.Errorf("--dir %s: %w", o.Dir, err)
		}
	}
	if o.ConfigFile != "" {
		if o.configFile, err = filepath.Abs(o.ConfigFile); err != nil {
			return fmt.Errorf("--config %s: %w", o.ConfigFile, err)
		}
		if o.cfg, err = config.Load(o.ConfigFile); err != nil {
			return fmt.Errorf("--config: %w", err)
		}
	}
	o.topology = devEnvTopology(o.Topology, o.cfg)
	if o.OAuthAPIs {
		if o.oauthAPIServer, err = cluster.OperatorBinary("oauth-apiserver"); err != nil {
			return fmt.Errorf("--oauth-apis: %w", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the topolayer-devenv executable to run in the background: %w", err)
	}
	o.serve = []string{exe, "serve"}
	return nil
}

// Validate checks the flags without side effects.
func (o *UpOptions) Validate() error {
	return errors.Join(validateDevEnvDir(o.Dir), validateDevEnvTopology(o.Topology), validateTimeout(o.Timeout))
}

// Run starts the environment in the background and waits until it is ready.
func (o *UpOptions) Run(ctx context.Context) error {
	if len(o.serve) == 0 {
		return errors.New("up: Complete was not called before Run")
	}
	// In the foreground: a first build takes minutes, and its progress is worth seeing.
	assets, err := cluster.AssetsDir(ctx, o.ErrOut)
	if err != nil {
		return err
	}
	args := slices.Concat(o.serve[1:], []string{"--dir", o.dir, "--topology", strings.ToLower(string(o.topology))})
	if o.configFile != "" {
		args = append(args, "--config", o.configFile)
	}
	if o.oauthAPIServer != "" {
		args = append(args, "--oauth-apiserver", o.oauthAPIServer)
	}
	serve := exec.Command(o.serve[0], args...)
	serve.Env = append(os.Environ(), cluster.EnvAssets+"="+assets)
	serve.Dir = "/" // keep no directory busy

	d := cluster.DevEnv{Dir: o.dir}
	fmt.Fprintf(o.ErrOut, "starting a %s dev environment in %s (log: %s)\n", strings.ToLower(string(o.topology)), o.dir, filepath.Join(o.dir, cluster.DevEnvLogFile))
	start := time.Now()
	if err := d.Launch(ctx, serve, o.Timeout); errors.Is(err, cluster.ErrDevEnvRunning) {
		return fmt.Errorf("%w; to start afresh: topolayer-devenv down --dir %s", err, o.dir)
	} else if err != nil {
		return err
	}
	pid, _ := d.PID()
	kubeconfigs, err := d.Kubeconfigs()
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "%s dev environment running in %s (pid %d), ready in %s\n", strings.ToLower(string(o.topology)), o.dir, pid, time.Since(start).Round(100*time.Millisecond))
	var names []string
	for _, name := range []string{cluster.Management, cluster.Guest, cluster.Single} {
		if kubeconfigs[name] != "" {
			names = append(names, name)
		}
	}
	for _, name := range names {
		fmt.Fprintf(o.Out, "  %-10s  %s\n", name, kubeconfigs[name])
	}
	fmt.Fprintf(o.Out, "try:  kubectl --kubeconfig %s get namespaces\nstop: topolayer-devenv down --dir %s\n", kubeconfigs[names[0]], o.dir)
	return nil
}

// DownOptions are the options of `topolayer-devenv down`.
type DownOptions struct {
	Dir     string        // --dir
	Timeout time.Duration // --timeout

	dir string // set by Complete: Dir, absolute

	IOStreams
}

func newCmdDown(streams IOStreams) *cobra.Command {
	o := &DownOptions{Timeout: time.Minute, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "down --dir DIR",
		Short: "Stop the API servers that up started and remove their data",
		Long: `Down stops the background process of up and its API servers (killing them if they do
not stop within --timeout), then removes the kubeconfigs, the log and the data from DIR, and
DIR itself unless it holds other files. It is a no-op on a directory with nothing running.`,
		Example:      `  topolayer-devenv down --dir /tmp/devenv`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE:         cli.RunCommand(o),
	}
	cmd.Flags().StringVar(&o.Dir, "dir", o.Dir, "the directory given to up")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "how long the servers may take to stop before they are killed")
	return cmd
}

// Complete makes --dir absolute.
func (o *DownOptions) Complete() error {
	if o.Dir == "" {
		return nil
	}
	var err error
	if o.dir, err = filepath.Abs(o.Dir); err != nil {
		return fmt.Errorf("--dir %s: %w", o.Dir, err)
	}
	return nil
}

// Validate checks the flags without side effects.
func (o *DownOptions) Validate() error {
	return errors.Join(validateDevEnvDir(o.Dir), validateTimeout(o.Timeout))
}

// Run stops the environment and removes its files.
func (o *DownOptions) Run(ctx context.Context) error {
	if o.dir == "" {
		return errors.New("down: Complete was not called before Run")
	}
	d := cluster.DevEnv{Dir: o.dir}
	pid, running := d.PID()
	leftovers, _ := d.Processes()
	start := time.Now()
	if err := d.Stop(ctx, o.Timeout); errors.Is(err, cluster.ErrNoDevEnv) {
		fmt.Fprintf(o.Out, "no dev environment in %s: nothing to do\n", o.dir)
		return nil
	} else if err != nil {
		return err
	}
	took := time.Since(start).Round(100 * time.Millisecond)
	switch {
	case running:
		fmt.Fprintf(o.Out, "stopped the dev environment in %s (pid %d) in %s and removed its data\n", o.dir, pid, took)
	case len(leftovers) > 0:
		fmt.Fprintf(o.Out, "the dev environment's process in %s was gone; stopped its %d leftover server processes in %s and removed its data\n", o.dir, len(leftovers), took)
	default:
		fmt.Fprintf(o.Out, "no dev environment was running in %s; removed its files\n", o.dir)
	}
	if _, err := os.Stat(o.dir); err == nil {
		fmt.Fprintf(o.Out, "kept %s: it holds other files\n", o.dir)
	}
	return nil
}

// ServeOptions are the options of `topolayer-devenv serve`, which up runs in
// the background.
type ServeOptions struct {
	Dir        string // --dir, absolute
	Topology   string // --topology
	ConfigFile string // --config, absolute
	// OAuthAPIServer is --oauth-apiserver: the OAuth API server binary, when the guest
	// serves the OAuth APIs (up's --oauth-apis).
	OAuthAPIServer string

	cfg *config.TopologyConfig // set by Complete

	IOStreams
}

func newCmdServe(streams IOStreams) *cobra.Command {
	o := &ServeOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Annotations:  map[string]string{cli.AnnotationDaemon: "true"},
		Use:          "serve --dir DIR [--topology hosted|standalone] [--config FILE]",
		Short:        "Serve a dev environment until SIGTERM (run by up, in the background)",
		Hidden:       true,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE:         cli.RunCommand(o),
	}
	cmd.Flags().StringVar(&o.Dir, "dir", o.Dir, "the dev environment's directory (absolute)")
	cmd.Flags().StringVar(&o.Topology, "topology", o.Topology, "hosted or standalone")
	cmd.Flags().StringVar(&o.ConfigFile, "config", o.ConfigFile, "topology configuration (absolute)")
	cmd.Flags().StringVar(&o.OAuthAPIServer, "oauth-apiserver", o.OAuthAPIServer, "the OAuth API server binary (absolute), to serve the OAuth APIs on the guest")
	return cmd
}

// Complete reads --config.
func (o *ServeOptions) Complete() error {
	if o.ConfigFile == "" {
		return nil
	}
	var err error
	if o.cfg, err = config.Load(o.ConfigFile); err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	return nil
}

// Validate checks the flags without side effects.
func (o *ServeOptions) Validate() error {
	var errs []error
	if !filepath.IsAbs(o.Dir) {
		errs = append(errs, fmt.Errorf("--dir %q: must be an absolute path", o.Dir))
	}
	if o.ConfigFile != "" && !filepath.IsAbs(o.ConfigFile) {
		errs = append(errs, fmt.Errorf("--config %q: must be an absolute path", o.ConfigFile))
	}
	return errors.Join(append(errs, validateDevEnvTopology(o.Topology))...)
}

// Run serves the environment until ctx ends: main cancels it on SIGTERM, which down
// sends.
func (o *ServeOptions) Run(ctx context.Context) error {
	signal.Ignore(syscall.SIGHUP) // no terminal, but be sure
	env := &cluster.Environment{
		Topology:       devEnvTopology(o.Topology, o.cfg),
		TopologyConfig: o.cfg,
		Output:         o.ErrOut,
		Progress:       o.ErrOut,
		OAuthAPIServer: o.OAuthAPIServer,
	}
	return cluster.DevEnv{Dir: filepath.Clean(o.Dir)}.Serve(ctx, env)
}

// devEnvTopology resolves --topology: its value, else the configuration's, else Hosted.
func devEnvTopology(flag string, cfg *config.TopologyConfig) config.TopologyType {
	return config.ResolveTopologyType(flag, cfg, config.Hosted)
}

func validateDevEnvTopology(flag string) error {
	switch strings.ToLower(flag) {
	case "", "hosted", "standalone":
		return nil
	}
	return fmt.Errorf("--topology %q: must be hosted or standalone", flag)
}

func validateDevEnvDir(dir string) error {
	if dir == "" {
		return errors.New("--dir is required")
	}
	return nil
}

func validateTimeout(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--timeout %s: must be positive", d)
	}
	return nil
}
