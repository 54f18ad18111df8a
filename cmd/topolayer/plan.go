package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// PlanOptions are the options of `topolayer plan`.
type PlanOptions struct {
	SourceOptions
	Output string // -o

	printer planPrinter
	IOStreams
}

// NewCmdPlan builds `topolayer plan`.
func NewCmdPlan(streams IOStreams) *cobra.Command {
	o := &PlanOptions{Output: "table", IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "plan --config FILE --from DIR",
		Short: "Show where every mutation of an operator's output directory would land, and why",
		Long: `Plan reads an operator's apply-configuration output directory and shows, for every
mutation, the target cluster and identity it would have, the rule that placed it, and its
disposition: apply, absorbed, dropped or rejected. Nothing is written anywhere.

With --output-resources, a mutation that the operator did not declare for its class is
rejected. Plan exits non-zero when any mutation is rejected.`,
		Example: `  # The standalone plan of an operator's outputs, as a table
  topolayer plan --config examples/standalone.yaml --from examples/outputs/sample

  # The same, checked against the operator's declarations, as JSON
  topolayer plan --config examples/standalone.yaml --from out --output-resources output-resources.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	addSourceFlags(cmd, &o.SourceOptions)
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: "+printerNames())
	return cmd
}

func addSourceFlags(cmd *cobra.Command, o *SourceOptions) {
	cmd.Flags().StringVar(&o.ConfigFile, "config", o.ConfigFile, "topology configuration file (TopologyConfig)")
	cmd.Flags().StringVar(&o.From, "from", o.From, "the operator's apply-configuration output directory")
	cmd.Flags().StringVar(&o.OutputResourcesFile, "output-resources", o.OutputResourcesFile, "the operator's output-resources document; undeclared mutations are rejected")
	cmd.Flags().StringVar(&o.Operator, "operator", o.Operator, "the operator's name, recorded in the plan")
}

// Complete chooses the printer.
func (o *PlanOptions) Complete() error {
	p, ok := planPrinters[o.Output]
	if !ok {
		return fmt.Errorf("--output %q: must be one of %s", o.Output, printerNames())
	}
	o.printer = p
	return nil
}

// Validate checks the flags without side effects.
func (o *PlanOptions) Validate() error { return o.validate() }

// Run prints the plan, and fails when any mutation is rejected.
func (o *PlanOptions) Run(context.Context) error {
	if o.printer == nil {
		return fmt.Errorf("--output %q was not completed", o.Output)
	}
	if err := o.load(); err != nil {
		return err
	}
	plan, err := o.plan()
	if err != nil {
		return err
	}
	if err := o.printer(o.Out, plan); err != nil {
		return err
	}
	return rejectedError(plan)
}
