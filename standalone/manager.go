package standalone

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

// ManagerOptions configure AddToManager.
type ManagerOptions struct {
	// Config is the standalone configuration (defaulted, as config.Load returns it).
	Config *config.TopologyConfig
	// Operators are the operators to run; nil means the configuration's.
	Operators []manager.Operator
	// ConfigDir is the directory of the configuration file, for relative commands.
	ConfigDir string
	// Declarations are the operators' declarations when the caller already has them.
	Declarations map[string]manager.Declarations
	// WorkDir holds the runs' directories; "" means Config.Manager.WorkDir or a new
	// temporary directory.
	WorkDir string
	// Registerer receives topolayer's metrics; nil means controller-runtime's registry,
	// which the manager's metrics endpoint serves.
	Registerer prometheus.Registerer
}

// AddToManager adds the multi-operator manager to a controller-runtime manager of the one
// cluster: outputs land unchanged; status objects and events go to
// Config.Manager.Namespace, which is created if missing. Call it before mgr.Start.
func AddToManager(ctx context.Context, mgr ctrlmanager.Manager, opts ManagerOptions) (*manager.Manager, error) {
	cfg := opts.Config
	if cfg == nil || cfg.Topology.Type != config.Standalone {
		return nil, errors.New("standalone: a Standalone topology configuration is required")
	}
	ops := opts.Operators
	if ops == nil {
		ops = manager.OperatorsFromConfig(cfg, opts.ConfigDir)
	}
	if err := ensureNamespace(ctx, mgr, cfg.Manager.Namespace); err != nil {
		return nil, err
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
		Declarations: opts.Declarations,
		Engine: func(operator string, declared *contract.OutputResources) (translate.Engine, error) {
			return Engine(cfg, operator, declared)
		},
		Clusters:        map[string]cluster.Cluster{routing.ClusterStandalone: mgr},
		StatusCluster:   routing.ClusterStandalone,
		StatusNamespace: cfg.Manager.Namespace,
		WorkDir:         workDir,
		Scheduler:       manager.SchedulerOptions(cfg),
		Registerer:      registerer,
		Recorder:        mgr.GetEventRecorder("topolayer"),
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(m); err != nil {
		return nil, err
	}
	return m, nil
}

func ensureNamespace(ctx context.Context, mgr ctrlmanager.Manager, name string) error {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	err = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("standalone: create the manager's namespace %s: %w", name, err)
	}
	return nil
}
