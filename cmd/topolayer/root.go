package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
)

// IOStreams are the standard streams a command reads and writes; tests pass buffers.
type IOStreams = cli.IOStreams

// NewRootCommand builds the topolayer command tree.
func NewRootCommand(streams IOStreams) *cobra.Command {
	cmd := cli.Root(&cobra.Command{
		Use:   "topolayer",
		Short: "Place MOM contract operator outputs in a standalone or hosted topology",
		Long: `topolayer takes what an operator written for a standalone OpenShift cluster would write
(the output directory of its apply-configuration command, under the multi-operator-manager
contract) and places every mutation where it belongs: on the one cluster (standalone), or in
the hosted control plane's namespace on the management cluster and in the guest cluster
(HyperShift). It shows the plan before anything is written.

` + exitCodesHelp,
	}, streams)
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
	cli.MarkUsageErrors(cmd, flagError)
	completeFlagValues(cmd)
	return cmd
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
