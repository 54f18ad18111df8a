package manager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// EmbedOptions configure AddToManager.
type EmbedOptions struct {
	// Topology is the placement of the configuration (topology.New).
	Topology *topology.Topology
	// Clusters are the client configurations of the topology's clusters other than the
	// one the controller-runtime manager runs on (Topology.Home): for hosted, "guest".
	// Without one for the guest, the guest is late: its kubeconfig is read from
	// GuestKubeconfig.
	Clusters map[string]*rest.Config
	// GuestKubeconfig is the Secret, in the hosted control plane's namespace of the home
	// cluster, that holds the guest's kubeconfig when Clusters has none: the zero value is
	// HyperShift's (service-network-admin-kubeconfig, key kubeconfig). The guest side
	// starts when the Secret appears and restarts when its kubeconfig changes (a rotated
	// token, new certificates); meanwhile the operators wait, and their status objects say
	// so (ResultWaiting). mgr's cache must hold the Secrets of that namespace.
	GuestKubeconfig GuestKubeconfigSecret
	// ComponentStatus, when set, writes a HyperShift ControlPlaneComponent for each
	// workload the operators place in the hosted control plane's namespace (opt-in: see
	// ComponentStatusOptions).
	ComponentStatus *ComponentStatusOptions
	// Operators are the operators to run; nil means the configuration's (with relative
	// commands resolved against ConfigDir).
	Operators []Operator
	// ConfigDir is the directory of the configuration file.
	ConfigDir string
	// Declarations are the operators' declarations when the caller already asked for them
	// (Declare); nil asks again.
	Declarations map[string]Declarations
	// WorkDir holds the runs' directories; "" means the configuration's manager.workDir,
	// else a new temporary directory.
	WorkDir string
	// Registerer receives topolayer's metrics; nil means controller-runtime's registry,
	// which the manager's metrics endpoint serves.
	Registerer prometheus.Registerer
	// RefreshClock is the clock of the guest kubeconfigs' token refreshes (Options);
	// nil means the real clock.
	RefreshClock clock.WithTicker
}

// AddToManager adds topolayer to a controller-runtime manager that runs on the topology's
// home cluster (the management cluster, with its cache limited to the hosted control
// plane's namespace as the control-plane-operator's is; or the one cluster): a cluster with
// its own cache over the inputs for each other cluster of the topology, and the
// multi-operator manager, which runs on the leader only. It uses mgr's cache, client,
// leader election, event recorder and metrics registry; it starts no second manager. The
// HostedControlPlane the hypershift profile reads is read from mgr's cluster, and watched
// (mgr's cache must hold the HostedControlPlanes of the hosted control plane's namespace).
// Where the topology's status namespace is topolayer's own, it is created if missing. Call
// it before mgr.Start.
func AddToManager(ctx context.Context, mgr ctrlmanager.Manager, opts EmbedOptions) (*Manager, error) {
	topo := opts.Topology
	if topo == nil {
		return nil, errors.New("manager: a topology is required")
	}
	cfg := topo.Config()
	ops := opts.Operators
	if ops == nil {
		ops = OperatorsFromConfig(cfg, opts.ConfigDir)
	}
	decl := opts.Declarations
	if decl == nil {
		var err error
		if decl, err = Declare(ctx, ops); err != nil {
			return nil, err
		}
	}
	watches, err := Watches(topo, decl)
	if err != nil {
		return nil, err
	}
	clusters := map[string]cluster.Cluster{topo.Home(): mgr}
	var late map[string]string
	var guestSecret *GuestKubeconfigReconciler
	for _, name := range topo.Clusters() {
		if name == topo.Home() {
			continue
		}
		rc := opts.Clusters[name]
		if rc == nil && name == routing.ClusterGuest {
			hcp, ok := topo.HostedControlPlane()
			if !ok {
				return nil, fmt.Errorf("manager: the %s cluster's client configuration is required", name)
			}
			secret := opts.GuestKubeconfig.withDefaults()
			guestSecret = &GuestKubeconfigReconciler{Reader: mgr.GetCache(), Secret: types.NamespacedName{Namespace: hcp.Namespace, Name: secret.Name}, Key: secret.Key, Cluster: name}
			late = map[string]string{name: fmt.Sprintf("its kubeconfig is read from the Secret %s, key %s, which does not exist yet", guestSecret.Secret, secret.Key)}
			continue
		}
		if rc == nil {
			return nil, fmt.Errorf("manager: the %s cluster's client configuration is required", name)
		}
		c, err := cluster.New(rc, func(o *cluster.Options) {
			o.Scheme = Scheme()
			o.Cache = ClusterCacheOptions(topo, watches, name)
			o.NewCache = ClusterNewCache(topo, watches, name)
		})
		if err != nil {
			return nil, fmt.Errorf("manager: the %s cluster: %w", name, err)
		}
		if err := mgr.Add(c); err != nil {
			return nil, err
		}
		clusters[name] = c
	}
	if status := topo.Status(); status.Create {
		if err := ensureNamespace(ctx, mgr, status.Namespace); err != nil {
			return nil, err
		}
	}
	workDir := opts.WorkDir
	if workDir == "" {
		workDir = cfg.Manager.WorkDir
	}
	var registerer prometheus.Registerer = ctrlmetrics.Registry
	if opts.Registerer != nil {
		registerer = opts.Registerer
	}
	m, err := New(ctx, Options{
		Topology:     topo,
		Operators:    ops,
		Declarations: decl,
		Clusters:     clusters,
		Late:         late,
		WorkDir:      workDir,
		Scheduler:    SchedulerOptions(cfg),
		Registerer:   registerer,
		Recorder:     mgr.GetEventRecorder("topolayer"),
		RefreshClock: opts.RefreshClock,
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(m); err != nil {
		return nil, err
	}
	if guestSecret != nil {
		guestSecret.Connector = m
		if err := guestSecret.SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("manager: watch the guest kubeconfig Secret: %w", err)
		}
	}
	if opts.ComponentStatus != nil {
		if err := addComponentStatus(mgr, topo, m, *opts.ComponentStatus); err != nil {
			return nil, fmt.Errorf("manager: component status: %w", err)
		}
	}
	return m, nil
}

// HomeOptions asks the operators for their declarations and returns them with the options
// of the controller-runtime manager that `topolayer run` starts on the topology's home
// cluster, for a program that runs topolayer as its main job: topolayer's scheme; the cache
// of ClusterCacheOptions over the watches the declarations need (on a confined cluster only
// its namespace, never the whole cluster; elsewhere each resource watched in the namespaces
// its inputs name, and nowhere else); leader election (when leaderElect) in the topology's
// namespace and name with OpenShift's timings (library-go's defaults: a leader keeps its lease
// through a kube-apiserver restart or rollout instead of exiting after 10s without it), the
// lease released on a clean shutdown so that a successor does not wait for it to expire;
// two minutes to shut down gracefully. Metrics, probes and pprof are the caller's to set;
// pass the declarations to AddToManager (EmbedOptions.Declarations).
func HomeOptions(ctx context.Context, topo *topology.Topology, ops []Operator, leaderElect bool) (ctrlmanager.Options, map[string]Declarations, error) {
	decl, err := Declare(ctx, ops)
	if err != nil {
		return ctrlmanager.Options{}, nil, err
	}
	watches, err := Watches(topo, decl)
	if err != nil {
		return ctrlmanager.Options{}, nil, err
	}
	ns, id := topo.LeaderElection()
	return ctrlmanager.Options{
		Scheme:                        Scheme(),
		Cache:                         ClusterCacheOptions(topo, watches, topo.Home()),
		NewCache:                      ClusterNewCache(topo, watches, topo.Home()),
		LeaderElection:                leaderElect,
		LeaderElectionNamespace:       ns,
		LeaderElectionID:              id,
		LeaseDuration:                 ptr(137 * time.Second),
		RenewDeadline:                 ptr(107 * time.Second),
		RetryPeriod:                   ptr(26 * time.Second),
		LeaderElectionReleaseOnCancel: leaderElect,
		GracefulShutdownTimeout:       ptr(2 * time.Minute),
	}, decl, nil
}

func ptr[T any](v T) *T { return &v }

// ClusterCacheOptions returns the cache options of one cluster of the topology: on a
// cluster confined to a namespace, that namespace only (never cluster-wide); elsewhere the
// namespaces the watches read there. The status namespace is not cached: the manager only
// writes its status objects, and keeps what it last wrote in memory.
func ClusterCacheOptions(topo *topology.Topology, watches []Watch, cluster string) cache.Options {
	if bound := topo.Bound(cluster); bound != "" {
		return CacheOptions(nil, cluster, bound)
	}
	return CacheOptions(watches, cluster)
}

// ClusterNewCache returns the cache constructor of one cluster of the topology: on a
// cluster confined to a namespace, controller-runtime's (one namespace: one watch per
// resource already); elsewhere NewCacheFunc, one watch per resource and namespace read.
func ClusterNewCache(topo *topology.Topology, watches []Watch, cluster string) cache.NewCacheFunc {
	if topo.Bound(cluster) != "" {
		return cache.New
	}
	return NewCacheFunc(watches, cluster)
}

func ensureNamespace(ctx context.Context, mgr ctrlmanager.Manager, name string) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	err = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("manager: create the status namespace %s: %w", name, err)
	}
	return nil
}
