package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/topology"
	"github.com/topolayer/topolayer/translate"
)

// SourceOptions are the flags that name one operator's outputs and the topology to place
// them in; plan and translate share them.
type SourceOptions struct {
	ConfigFile          string // --config
	From                string // --from
	OutputResourcesFile string // --output-resources
	Operator            string // --operator

	cfg      *config.TopologyConfig
	topo     *topology.Topology
	declared *contract.OutputResources
	out      *contract.OutputDir
}

func (o *SourceOptions) validate() error {
	var errs []error
	if o.ConfigFile == "" {
		errs = append(errs, errors.New("--config is required"))
	}
	if o.From == "" {
		errs = append(errs, errors.New("--from is required"))
	}
	return errors.Join(errs...)
}

// load reads the configuration, the declarations and the output directory.
func (o *SourceOptions) load() error {
	cfg, err := config.Load(o.ConfigFile)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	o.cfg = cfg
	if o.topo, err = topology.New(cfg); err != nil {
		return fmt.Errorf("--config %s: %w", o.ConfigFile, err)
	}
	if o.OutputResourcesFile != "" {
		data, err := os.ReadFile(o.OutputResourcesFile)
		if err != nil {
			return fmt.Errorf("--output-resources: %w", err)
		}
		if o.declared, err = contract.ParseOutputResources(data); err != nil {
			return fmt.Errorf("--output-resources: %s: %w", o.OutputResourcesFile, err)
		}
	}
	if o.out, err = contract.ReadOutputDir(o.From, contract.ReadOptions{}); err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	return nil
}

// plan translates the loaded outputs for the configured topology.
func (o *SourceOptions) plan() (*translate.Plan, error) {
	engine, err := o.topo.Engine(o.Operator, o.declared)
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", o.ConfigFile, err)
	}
	return engine.Plan(o.out), nil
}

// rejectedError lists the rejected entries of a plan.
func rejectedError(p *translate.Plan) error {
	rejected := p.Rejected()
	if len(rejected) == 0 {
		return nil
	}
	errs := make([]error, 0, len(rejected)+1)
	errs = append(errs, fmt.Errorf("%d of %d mutations rejected; nothing is written", len(rejected), len(p.Entries)))
	for _, e := range rejected {
		errs = append(errs, fmt.Errorf("%s: %s: %s", e.SourcePath, e.Source, e.Reason))
	}
	return errors.Join(errs...)
}
