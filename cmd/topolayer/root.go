package main

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// IOStreams are the standard streams a command reads and writes; tests pass buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// NewRootCommand builds the topolayer command tree.
func NewRootCommand(streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topolayer",
		Short: "Place MOM contract operator outputs in a standalone or hosted topology",
		Long: `topolayer takes what an operator written for a standalone OpenShift cluster would write
(the output directory of its apply-configuration command, under the multi-operator-manager
contract) and places every mutation where it belongs: on the one cluster (standalone), or in
the hosted control plane's namespace on the management cluster and in the guest cluster
(HyperShift). It shows the plan before anything is written.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.AddCommand(
		NewCmdPlan(streams),
		NewCmdTranslate(streams),
		NewCmdValidate(streams),
		NewCmdShadowCRDs(streams),
		NewCmdApply(streams),
		NewCmdGather(streams),
		NewCmdPrune(streams),
		NewCmdRun(streams),
		NewCmdTest(streams),
		NewCmdParity(streams),
		NewCmdVersion(streams),
	)
	addGlobalFlags(cmd, streams)
	suggestSubcommands(cmd)
	markUsageErrors(cmd)
	completeFlagValues(cmd)
	return cmd
}

// options are a command's options in kubectl's pattern: Validate checks without side
// effects, Run does the work; a completer's Complete first fills what the flags leave to
// compute.
type options interface {
	Validate() error
	Run(ctx context.Context) error
}

// completer is options with a Complete step.
type completer interface {
	Complete() error
}

// flagValue is a flag's name and the value it was given.
type flagValue struct{ name, value string }

// requiredFlags returns, in order, a "NAME is required" error for each flag of flags that
// was given no value: the start of a Validate.
func requiredFlags(flags []flagValue) []error {
	var errs []error
	for _, f := range flags {
		if f.value == "" {
			errs = append(errs, errors.New(f.name+" is required"))
		}
	}
	return errs
}

// runCommand is the RunE of a command whose options follow the pattern.
func runCommand(o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if c, ok := o.(completer); ok {
			if err := c.Complete(); err != nil {
				return err
			}
		}
		if err := o.Validate(); err != nil {
			return asUsage(err)
		}
		return o.Run(cmd.Context())
	}
}
