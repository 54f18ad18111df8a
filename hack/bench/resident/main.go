package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/hack/bench/fleet"
)

func main() {
	operator := flag.String("operator", "", "operator name (op00 ... op09)")
	leNamespace := flag.String("leader-election-namespace", "bench-le", "namespace of the leader-election Lease")
	flag.Parse()
	// --kubeconfig is controller-runtime's own flag (ctrl.GetConfig reads it).
	if err := run(*operator, *leNamespace); err != nil {
		fmt.Fprintln(os.Stderr, "resident:", err)
		os.Exit(1)
	}
}

func ptr[T any](v T) *T { return &v }

func run(operator, leNamespace string) error {
	i, err := fleet.OperatorIndex(operator)
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 clientgoscheme.Scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{fleet.Namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Operators run today with leader election and OpenShift's timings, as topolayer run does.
		LeaderElection:                true,
		LeaderElectionID:              "resident-" + operator,
		LeaderElectionNamespace:       leNamespace,
		LeaseDuration:                 ptr(137 * time.Second),
		RenewDeadline:                 ptr(107 * time.Second),
		RetryPeriod:                   ptr(26 * time.Second),
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	r := &fleet.Reconciler{Client: mgr.GetClient(), Operator: operator, Kinds: fleet.OperatorKinds(i)}
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: fleet.OutputNamespace, Name: fleet.OutputName(operator)}}}
	})
	b := ctrl.NewControllerManagedBy(mgr).Named(operator)
	for _, k := range r.Kinds {
		b = b.Watches(fleet.Kinds[k].New(""), one)
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
