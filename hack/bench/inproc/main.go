package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/hack/bench/fleet"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/topology"
)

func main() {
	configFile := flag.String("config", "", "the TopologyConfig (standalone) naming the fleet's operators")
	workDir := flag.String("work-dir", "", "where failed runs leave their directories")
	pprof := flag.String("pprof-bind-address", "0", "the pprof endpoint; 0 disables it")
	flag.Parse()
	// --kubeconfig is controller-runtime's own flag (ctrl.GetConfig reads it).
	log := zap.New()
	ctrl.SetLogger(log)
	if err := run(ctrl.LoggerInto(ctrl.SetupSignalHandler(), log), *configFile, *workDir, *pprof); err != nil {
		fmt.Fprintln(os.Stderr, "inproc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, configFile, workDir, pprof string) error {
	cfg, err := config.Load(configFile)
	if err != nil {
		return err
	}
	topo, err := topology.New(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", configFile, err)
	}
	rc, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	ops := manager.OperatorsFromConfig(cfg, filepath.Dir(configFile))
	linked := map[string]manager.Linked{}
	for _, op := range ops {
		l, err := fleet.Operator(op.Name)
		if err != nil {
			return err
		}
		linked[op.Name] = l
	}
	if err := manager.LinkInProcess(ops, linked); err != nil {
		return err
	}
	mopts, decl, err := manager.HomeOptions(ctx, topo, ops, *cfg.Manager.LeaderElection)
	if err != nil {
		return err
	}
	mopts.Metrics = metricsserver.Options{BindAddress: "0"}
	mopts.HealthProbeBindAddress = "0"
	mopts.PprofBindAddress = pprof
	mgr, err := ctrl.NewManager(rc, mopts)
	if err != nil {
		return err
	}
	if _, err := manager.AddToManager(ctx, mgr, manager.EmbedOptions{
		Topology: topo, Operators: ops, Declarations: decl, WorkDir: workDir,
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
