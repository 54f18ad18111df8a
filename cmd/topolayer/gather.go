package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/gather"
	"github.com/topolayer/topolayer/topology"
)

// GatherOptions are the options of `topolayer gather`.
type GatherOptions struct {
	ConfigFile          string // --config
	InputResourcesFile  string // --input-resources
	OutputResourcesFile string // --output-resources
	Operator            string // --operator
	To                  string // --to
	Overwrite           bool   // --overwrite
	ClusterOptions

	IOStreams
}

// NewCmdGather builds `topolayer gather`.
func NewCmdGather(streams IOStreams) *cobra.Command {
	o := &GatherOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "gather --config FILE --input-resources FILE --to DIR --operator NAME [--kubeconfig FILE] [--context NAME] | [--management-kubeconfig FILE --guest-kubeconfig FILE]",
		Short: "Read an operator's inputs from the live clusters into a standalone input directory",
		Long: `Gather reads what an operator declares it reads (the applyConfigurationResources of its
input-resources: exact, label-selected and implicit-namespaced references) from where the
topology keeps it, and writes them as a standalone input directory (list form).

Hosted: an input is read from the guest cluster under its own identity, unless the operator
writes it itself (--output-resources declares it as a Management or Configuration output) and
the routing rules place it on the management cluster: then it is read in the hosted control
plane's namespace and mapped back to its standalone form. Objects that do not exist are
skipped. The directory appears whole or not at all.`,
		Example: `  # The sample operator's inputs, from the hosted dev environment (topolayer-devenv up --dir /tmp/dev)
  bin/sample-operator input-resources > /tmp/sample-input-resources.yaml
  topolayer gather --config examples/hosted.yaml --operator sample-operator \
    --input-resources /tmp/sample-input-resources.yaml --output-resources examples/outputs/sample-operator-output-resources.yaml \
    --management-kubeconfig /tmp/dev/management.kubeconfig --guest-kubeconfig /tmp/dev/guest.kubeconfig --to /tmp/sample-input`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.ConfigFile, "config", o.ConfigFile, "topology configuration file")
	f.StringVar(&o.InputResourcesFile, "input-resources", o.InputResourcesFile, "the operator's input-resources document")
	f.StringVar(&o.OutputResourcesFile, "output-resources", o.OutputResourcesFile, "the operator's output-resources document (hosted: where its own outputs live)")
	f.StringVar(&o.Operator, "operator", o.Operator, "the operator's name")
	addOutputDirFlags(cmd, &o.To, &o.Overwrite, "input directory")
	addKubeconfigFlags(cmd, &o.ClusterOptions)
	return cmd
}

// Validate checks the flags without side effects.
func (o *GatherOptions) Validate() error {
	errs := requiredFlags([]flagValue{{"--config", o.ConfigFile}, {"--input-resources", o.InputResourcesFile}, {"--to", o.To}, {"--operator", o.Operator}})
	errs = append(errs, o.ClusterOptions.validate())
	return errors.Join(errs...)
}

// Run gathers and writes the directory.
func (o *GatherOptions) Run(ctx context.Context) error {
	cfg, err := config.Load(o.ConfigFile)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	data, err := os.ReadFile(o.InputResourcesFile)
	if err != nil {
		return fmt.Errorf("--input-resources: %w", err)
	}
	inputs, err := contract.ParseInputResources(data)
	if err != nil {
		return fmt.Errorf("--input-resources: %s: %w", o.InputResourcesFile, err)
	}
	var outputs *contract.OutputResources
	if o.OutputResourcesFile != "" {
		data, err := os.ReadFile(o.OutputResourcesFile)
		if err != nil {
			return fmt.Errorf("--output-resources: %w", err)
		}
		if outputs, err = contract.ParseOutputResources(data); err != nil {
			return fmt.Errorf("--output-resources: %s: %w", o.OutputResourcesFile, err)
		}
	}
	topo, err := topology.New(cfg)
	if err != nil {
		return fmt.Errorf("--config %s: %w", o.ConfigFile, err)
	}
	clusters, err := o.configs(topo)
	if err != nil {
		return err
	}
	p := startProgress(o.ErrOut, "gathering the inputs of "+o.Operator)
	res, err := gather.Gather(ctx, gather.Options{Placement: topo, Inputs: inputs, Outputs: outputs, Clusters: clusters, Operator: o.Operator})
	p.Stop()
	if err != nil {
		return err
	}
	if err := replaceDir(o.To, o.Overwrite, func(staged string) error {
		return contract.WriteInputDir(staged, res.Objects)
	}); err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	fmt.Fprintf(o.Out, "gathered %d objects (%d projected, %d not found) into %s\n", len(res.Objects), len(res.Projected), len(res.Skipped), o.To)
	return nil
}
