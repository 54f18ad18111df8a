package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/samples/sample"
	"github.com/topolayer/topolayer/internal/samples/sampleaudit"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

func main() {
	o := options{componentNames: map[string]string{}}
	flag.StringVar(&o.configFile, "config", "", "the hosted TopologyConfig: the HCP namespace, the HostedControlPlane and the operators to run")
	flag.StringVar(&o.managementKubeconfig, "management-kubeconfig", "", "the management cluster's kubeconfig (in a pod: empty, the in-cluster configuration)")
	flag.StringVar(&o.guestKubeconfig, "guest-kubeconfig", "", "the guest cluster's kubeconfig file; empty: read it from the Secret --guest-kubeconfig-secret, as the control-plane-operator's components do")
	flag.StringVar(&o.guestSecret, "guest-kubeconfig-secret", manager.DefaultGuestKubeconfigSecret, "without --guest-kubeconfig: the Secret in the HCP namespace whose key "+manager.DefaultGuestKubeconfigKey+" holds the guest's kubeconfig; the guest side starts when it appears and restarts when it changes")
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "the metrics endpoint, shared by the operator's controllers and topolayer")
	flag.StringVar(&o.workDir, "work-dir", "", "where topolayer keeps its runs' directories (default: a temporary directory)")
	flag.BoolVar(&o.inProcess, "in-process", false, "run the sample operators linked into this program, in memory, instead of their binaries")
	flag.BoolVar(&o.componentStatus, "component-status", false, "write a HyperShift ControlPlaneComponent for each Deployment the operators place in the HCP namespace")
	flag.Var(componentNames(o.componentNames), "component-name", "DEPLOYMENT=COMPONENT: the component of the placed Deployment whose standalone name is DEPLOYMENT (repeatable; default: that name)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	if err := run(ctrl.SetupSignalHandler(), o); err != nil {
		fmt.Fprintln(os.Stderr, "hosted-embedding:", err)
		os.Exit(1)
	}
}

// options are the program's flags.
type options struct {
	configFile, managementKubeconfig, guestKubeconfig, guestSecret, metricsAddr, workDir string
	inProcess, componentStatus                                                           bool
	componentNames                                                                       map[string]string
}

// componentNames is the flag.Value of --component-name: DEPLOYMENT=COMPONENT pairs.
type componentNames map[string]string

func (c componentNames) String() string {
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		pairs = append(pairs, k+"="+c[k])
	}
	return strings.Join(pairs, ",")
}

func (c componentNames) Set(v string) error {
	deployment, component, ok := strings.Cut(v, "=")
	if !ok || deployment == "" || component == "" {
		return fmt.Errorf("%q: want DEPLOYMENT=COMPONENT", v)
	}
	c[deployment] = component
	return nil
}

func run(ctx context.Context, o options) error {
	configFile := o.configFile
	cfg, err := config.Load(configFile)
	if err != nil {
		return err
	}
	topo, err := topology.New(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", configFile, err)
	}
	// The control-plane-operator runs for one hosted control plane: the configuration must
	// name it.
	hcp, ok := topo.HostedControlPlane()
	if !ok {
		return fmt.Errorf("%s: topology.type: %s, want Hosted with a hostedControlPlane", configFile, cfg.Topology.Type)
	}

	// The control-plane-operator's manager: the management cluster, one namespace.
	mgmt, err := clientcmd.BuildConfigFromFlags("", o.managementKubeconfig)
	if err != nil {
		return fmt.Errorf("--management-kubeconfig: %w", err)
	}
	// The guest: a kubeconfig file given, or, as in a hosted control plane, the kubeconfig
	// Secret HyperShift writes into the HCP namespace once the guest's API server is up
	// (topolayer waits for it, and restarts its guest side when it rotates).
	clusters := map[string]*rest.Config{}
	if o.guestKubeconfig != "" {
		guest, err := clientcmd.BuildConfigFromFlags("", o.guestKubeconfig)
		if err != nil {
			return fmt.Errorf("--guest-kubeconfig: %w", err)
		}
		clusters[routing.ClusterGuest] = guest
	}
	mgr, err := ctrl.NewManager(mgmt, ctrl.Options{
		Scheme:                        clientgoscheme.Scheme,
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{hcp.Namespace: {}}},
		Metrics:                       metricsserver.Options{BindAddress: o.metricsAddr},
		LeaderElection:                true,
		LeaderElectionNamespace:       hcp.Namespace,
		LeaderElectionID:              "control-plane-operator-" + hcp.Name,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr(137 * time.Second),
		RenewDeadline:                 ptr(107 * time.Second),
		RetryPeriod:                   ptr(26 * time.Second),
	})
	if err != nil {
		return err
	}

	// The control-plane-operator's own controllers stay as they are.
	if err := addHostedControlPlaneController(mgr, hcp.Namespace); err != nil {
		return err
	}

	// topolayer: the operators of the configuration, run when what they read changes, their
	// outputs placed in the HCP namespace and in the guest cluster.
	// The operators of the configuration, each a binary; with --in-process, the sample
	// operators linked into this program run in memory over the objects topolayer gathers
	// from its caches, as the control-plane-operator would run the operators it links.
	ops := manager.OperatorsFromConfig(cfg, filepath.Dir(configFile))
	if o.inProcess {
		if err := linkSamples(cfg, ops); err != nil {
			return err
		}
	}
	// With --component-status, each Deployment placed in the HCP namespace is reported to
	// HyperShift as a ControlPlaneComponent, as the control-plane-operator's own are.
	var components *manager.ComponentStatusOptions
	if o.componentStatus {
		components = &manager.ComponentStatusOptions{Names: o.componentNames}
	}
	if _, err := manager.AddToManager(ctx, mgr, manager.EmbedOptions{
		Topology:        topo,
		Clusters:        clusters,
		GuestKubeconfig: manager.GuestKubeconfigSecret{Name: o.guestSecret},
		ComponentStatus: components,
		Operators:       ops,
		WorkDir:         o.workDir,
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// addHostedControlPlaneController stands for the control-plane-operator's controllers: it
// logs each change of the HostedControlPlane in namespace.
// linkSamples links the sample operators (sdk/samples) that the configuration names: the
// sample operator with the operand image its configured environment gives (SAMPLE_IMAGE, as
// its binary reads it).
func linkSamples(cfg *config.TopologyConfig, ops []manager.Operator) error {
	linked := map[string]manager.Linked{}
	for _, op := range cfg.Operators {
		switch op.Name {
		case sample.Name:
			l, err := sample.New(op.Env["SAMPLE_IMAGE"])
			if err != nil {
				return err
			}
			linked[op.Name] = l
		case sampleaudit.Name:
			l, err := sampleaudit.New()
			if err != nil {
				return err
			}
			linked[op.Name] = l
		}
	}
	return manager.LinkInProcess(ops, linked)
}

func addHostedControlPlaneController(mgr ctrl.Manager, namespace string) error {
	hcp := &unstructured.Unstructured{}
	hcp.SetGroupVersionKind(hosted.HostedControlPlaneGVR().GroupVersion().WithKind("HostedControlPlane"))
	return ctrl.NewControllerManagedBy(mgr).
		Named("hostedcontrolplane").
		For(hcp).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			obj := hcp.DeepCopy()
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, obj); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			ctrl.LoggerFrom(ctx).Info("reconciled the hosted control plane", "namespace", namespace, "generation", obj.GetGeneration())
			return reconcile.Result{}, nil
		}))
}

func ptr[T any](v T) *T { return &v }
