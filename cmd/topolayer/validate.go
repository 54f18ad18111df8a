package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/config"
)

// ValidateOptions are the options of `topolayer validate`.
type ValidateOptions struct {
	ConfigFile string // --config

	IOStreams
}

// NewCmdValidate builds `topolayer validate`.
func NewCmdValidate(streams IOStreams) *cobra.Command {
	o := &ValidateOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "validate --config FILE",
		Short: "Check a topology configuration and explain every error with its field path",
		Long: `Validate reads a TopologyConfig, fills in its defaults and checks it whole: every problem is
reported with the path of its field in the file. It exits non-zero when there is any.`,
		Example: `  topolayer validate --config examples/hosted.yaml`,
		Args:    cobra.NoArgs,
		RunE:    runCommand(o),
	}
	cmd.Flags().StringVar(&o.ConfigFile, "config", o.ConfigFile, "topology configuration file (TopologyConfig)")
	return cmd
}

// Validate checks the flags.
func (o *ValidateOptions) Validate() error {
	if o.ConfigFile == "" {
		return errors.New("--config is required")
	}
	return nil
}

// Run loads the configuration and reports what it amounts to.
func (o *ValidateOptions) Run(context.Context) error {
	cfg, err := config.Load(o.ConfigFile)
	if err != nil {
		return err
	}
	transforms, err := cfg.CompileTransforms()
	if err != nil {
		return fmt.Errorf("%s: %w", o.ConfigFile, err)
	}
	fmt.Fprintf(o.Out, "%s: valid: topology %s, %d routing rules (%d configured), %d transforms\n",
		o.ConfigFile, cfg.Topology.Type, len(cfg.RoutingTable().Rules), len(cfg.Routing.Rules), len(transforms))
	return nil
}
