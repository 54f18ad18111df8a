package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/topology"
)

// SourceOptions are the flags that name one operator's outputs and the topology to place
// them in; plan and translate share them.
type SourceOptions struct {
	ConfigFile          string // --config
	From                string // --from
	OutputResourcesFile string // --output-resources
	Operator            string // --operator
	MaxOutputSize       string // --max-output-size: a quantity; empty: the operator's limits.outputSize
	// HostedControlPlaneFile is --hosted-control-plane: the HostedControlPlane the hypershift
	// profile reads, offline.
	HostedControlPlaneFile string

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

// load reads the configuration, the declarations and the output directory, stopping when ctx
// is done.
func (o *SourceOptions) load(ctx context.Context) error {
	readOpts, err := o.loadConfig()
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if o.out, err = contract.ReadOutputDirContext(ctx, o.From, readOpts); err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if len(o.out.Mutations) == 0 && !o.out.HasControllerResults {
		return fmt.Errorf("--from %s: %w", o.From, errEmptyOutputDir)
	}
	return nil
}

// loadConfig reads the configuration and the declarations, and returns how the output
// directory is to be read.
func (o *SourceOptions) loadConfig() (contract.ReadOptions, error) {
	var err error
	if o.cfg, o.topo, err = loadTopology("--config", o.ConfigFile, o.HostedControlPlaneFile); err != nil {
		return contract.ReadOptions{}, err
	}
	if o.OutputResourcesFile != "" {
		data, err := os.ReadFile(o.OutputResourcesFile)
		if err != nil {
			return contract.ReadOptions{}, fmt.Errorf("--output-resources: %w", err)
		}
		if o.declared, err = contract.ParseOutputResources(data); err != nil {
			return contract.ReadOptions{}, fmt.Errorf("--output-resources: %s: %w", o.OutputResourcesFile, err)
		}
	}
	limit, err := o.maxOutputSize()
	if err != nil {
		return contract.ReadOptions{}, err
	}
	return contract.ReadOptions{MaxTotalSize: limit}, nil
}

// loadTopology reads the topology configuration that flag (--config, --config-hosted) names
// and builds its topology, given the HostedControlPlane of hcpFile (--hosted-control-plane)
// when that is not empty. Its errors name the flag.
func loadTopology(flag, file, hcpFile string) (*config.TopologyConfig, *topology.Topology, error) {
	cfg, err := config.Load(file)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", flag, err)
	}
	topo, err := topology.New(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", flag, file, err)
	}
	if hcpFile == "" {
		return cfg, topo, nil
	}
	h, err := readHostedControlPlane(hcpFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--hosted-control-plane: %w", err)
	}
	if topo, err = topo.WithHostedControlPlane(h); err != nil {
		return nil, nil, fmt.Errorf("--hosted-control-plane %s: %w", hcpFile, err)
	}
	return cfg, topo, nil
}

// errEmptyOutputDir refuses an output directory with neither a mutation nor
// controller-results.yaml. apply-configuration writes controller-results.yaml on every run,
// even one that writes nothing, so such a directory is not an operator's output: a wrong
// path, or a run that died before its end. Planning it as "0 mutations" would say that the
// operator wants nothing written, which nobody said.
var errEmptyOutputDir = errors.New("neither a mutation nor controller-results.yaml: not the output of an apply-configuration run (a wrong path, or a run that stopped before its end)")

// maxOutputSize is the bound on the output directory's total size: --max-output-size, else
// the limits.outputSize of the operator named by --operator, as `topolayer run` applies it,
// else contract.DefaultMaxOutputSize.
func (o *SourceOptions) maxOutputSize() (int64, error) {
	if o.MaxOutputSize != "" {
		q, err := resource.ParseQuantity(o.MaxOutputSize)
		if err != nil || q.Sign() <= 0 {
			return 0, fmt.Errorf("--max-output-size %q: must be a positive quantity of bytes such as 64Mi", o.MaxOutputSize)
		}
		return q.Value(), nil
	}
	for _, op := range o.cfg.Operators {
		if op.Name == o.Operator && op.Limits.OutputSize != nil {
			return op.Limits.OutputSize.Value(), nil
		}
	}
	return contract.DefaultMaxOutputSize, nil
}

// plan translates the loaded outputs for the configured topology.
func (o *SourceOptions) plan() (*plans.Plan, error) {
	engine, err := o.topo.Engine(o.Operator, o.declared)
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", o.ConfigFile, err)
	}
	return engine.Plan(o.out), nil
}

// acceptedPlan loads the sources and plans them; a plan with a rejected entry is an error
// (rejectedError): apply and translate write nothing of it.
func (o *SourceOptions) acceptedPlan(ctx context.Context) (*plans.Plan, error) {
	if err := o.load(ctx); err != nil {
		return nil, err
	}
	plan, err := o.plan()
	if err != nil {
		return nil, err
	}
	return plan, rejectedError(plan)
}

// rejectedError lists the rejected entries of a plan.
func rejectedError(p *plans.Plan) error {
	rejected := p.Rejected()
	if len(rejected) == 0 {
		return nil
	}
	errs := make([]error, 0, len(rejected)+1)
	errs = append(errs, fmt.Errorf("%d of %d mutations rejected; nothing is written", len(rejected), p.Summary.Total()))
	for _, e := range rejected {
		// Most reasons begin with the source already.
		reason := strings.TrimPrefix(e.Reason, e.Source.String()+": ")
		errs = append(errs, fmt.Errorf("%s: %s: %s: %s", e.SourcePath, e.Source, e.Rule, reason))
	}
	return errors.Join(errs...)
}

// readHostedControlPlane reads a HostedControlPlane object from a YAML or JSON file.
func readHostedControlPlane(path string) (*hosted.HostedControlPlane, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj, err := contract.ParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h, err := hosted.ParseHostedControlPlane(&unstructured.Unstructured{Object: obj})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
