package main

import (
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
(HyperShift). It shows the plan before anything is written.`,
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
		NewCmdDevEnv(streams),
		NewCmdApply(streams),
		NewCmdGather(streams),
		NewCmdPrune(streams),
		NewCmdRun(streams),
		NewCmdTest(streams),
		NewCmdParity(streams),
	)
	return cmd
}
