package hosted

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/topolayer/topolayer/apply"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

// ManagerOptions configure AddToManager.
type ManagerOptions struct {
	// Config is the hosted topology configuration (defaulted, as config.Load returns it).
	Config *config.TopologyConfig
	// Guest is the client configuration of the guest cluster.
	Guest *rest.Config
	// Operators are the operators to run; nil means the configuration's (Config.Operators,
	// with relative commands resolved against ConfigDir).
	Operators []manager.Operator
	// ConfigDir is the directory of the configuration file.
	ConfigDir string
	// Declarations are the operators' declarations when the caller already asked for them
	// (manager.Declare); nil asks again.
	Declarations map[string]manager.Declarations
	// WorkDir holds the runs' directories; "" means Config.Manager.WorkDir, else a new
	// temporary directory.
	WorkDir string
	// Registerer receives topolayer's metrics; nil means controller-runtime's registry,
	// which the manager's metrics endpoint serves.
	Registerer prometheus.Registerer
}

// AddToManager adds topolayer to a controller-runtime manager that runs on the management
// cluster with its cache limited to the hosted control plane's namespace, as the
// control-plane-operator's is: it adds a cluster for the guest (its own cache over the
// guest's inputs) and the multi-operator manager, which runs on the leader only. It uses
// mgr's cache, client, leader election, event recorder and metrics registry; it starts no
// second manager. Call it before mgr.Start.
func AddToManager(ctx context.Context, mgr ctrlmanager.Manager, opts ManagerOptions) (*manager.Manager, error) {
	cfg := opts.Config
	if cfg == nil || cfg.Topology.Type != config.Hosted || cfg.Topology.Hosted == nil {
		return nil, errors.New("hosted: a Hosted topology configuration is required")
	}
	if opts.Guest == nil {
		return nil, errors.New("hosted: the guest cluster's configuration is required")
	}
	h := cfg.Topology.Hosted
	ops := opts.Operators
	if ops == nil {
		ops = manager.OperatorsFromConfig(cfg, opts.ConfigDir)
	}
	decl := opts.Declarations
	if decl == nil {
		var err error
		if decl, err = manager.Declare(ctx, ops); err != nil {
			return nil, err
		}
	}
	watches, err := manager.Watches(cfg, decl)
	if err != nil {
		return nil, err
	}
	guest, err := cluster.New(opts.Guest, func(o *cluster.Options) {
		o.Scheme = manager.Scheme()
		o.Cache = manager.CacheOptions(watches, routing.ClusterGuest)
	})
	if err != nil {
		return nil, fmt.Errorf("hosted: the guest cluster: %w", err)
	}
	if err := mgr.Add(guest); err != nil {
		return nil, err
	}
	owner, err := apply.ResolveHostedControlPlane(ctx, mgr.GetConfig(), h.Namespace, h.HostedControlPlane)
	if err != nil {
		return nil, fmt.Errorf("hosted: %w", err)
	}
	workDir := opts.WorkDir
	if workDir == "" {
		workDir = cfg.Manager.WorkDir
	}
	var registerer prometheus.Registerer = metrics.Registry
	if opts.Registerer != nil {
		registerer = opts.Registerer
	}
	m, err := manager.New(ctx, manager.Options{
		Config:       cfg,
		Operators:    ops,
		Declarations: decl,
		Engine: func(operator string, declared *contract.OutputResources) (translate.Engine, error) {
			return Engine(cfg, operator, declared)
		},
		Clusters:           map[string]cluster.Cluster{routing.ClusterManagement: mgr, routing.ClusterGuest: guest},
		StatusCluster:      routing.ClusterManagement,
		StatusNamespace:    h.Namespace,
		HostedControlPlane: owner,
		WorkDir:            workDir,
		Scheduler:          manager.SchedulerOptions(cfg),
		Registerer:         registerer,
		Recorder:           mgr.GetEventRecorder("topolayer"),
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(m); err != nil {
		return nil, err
	}
	return m, nil
}
