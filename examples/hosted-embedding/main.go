package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
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

	"github.com/topolayer/topolayer/apply"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

func main() {
	var configFile, managementKubeconfig, guestKubeconfig, metricsAddr, workDir string
	flag.StringVar(&configFile, "config", "", "the hosted TopologyConfig: the HCP namespace, the HostedControlPlane and the operators to run")
	flag.StringVar(&managementKubeconfig, "management-kubeconfig", "", "the management cluster's kubeconfig (in a pod: empty, the in-cluster configuration)")
	flag.StringVar(&guestKubeconfig, "guest-kubeconfig", "", "the guest cluster's kubeconfig (the control-plane-operator mounts the hosted cluster's admin kubeconfig)")
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "the metrics endpoint, shared by the operator's controllers and topolayer")
	flag.StringVar(&workDir, "work-dir", "", "where topolayer keeps its runs' directories (default: a temporary directory)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	if err := run(ctrl.SetupSignalHandler(), configFile, managementKubeconfig, guestKubeconfig, metricsAddr, workDir); err != nil {
		fmt.Fprintln(os.Stderr, "hosted-embedding:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, configFile, managementKubeconfig, guestKubeconfig, metricsAddr, workDir string) error {
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
	mgmt, err := clientcmd.BuildConfigFromFlags("", managementKubeconfig)
	if err != nil {
		return fmt.Errorf("--management-kubeconfig: %w", err)
	}
	guest, err := clientcmd.BuildConfigFromFlags("", guestKubeconfig)
	if err != nil {
		return fmt.Errorf("--guest-kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(mgmt, ctrl.Options{
		Scheme:                        clientgoscheme.Scheme,
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{hcp.Namespace: {}}},
		Metrics:                       metricsserver.Options{BindAddress: metricsAddr},
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
	if _, err := manager.AddToManager(ctx, mgr, manager.EmbedOptions{
		Topology:  topo,
		Clusters:  map[string]*rest.Config{routing.ClusterGuest: guest},
		ConfigDir: filepath.Dir(configFile),
		WorkDir:   workDir,
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// addHostedControlPlaneController stands for the control-plane-operator's controllers: it
// logs each change of the HostedControlPlane in namespace.
func addHostedControlPlaneController(mgr ctrl.Manager, namespace string) error {
	hcp := &unstructured.Unstructured{}
	hcp.SetGroupVersionKind(apply.HostedControlPlaneGVR.GroupVersion().WithKind("HostedControlPlane"))
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
