package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/contract"
)

// Command returns the operator's command line, the three subcommands of the contract:
//
//	<name> input-resources
//	<name> output-resources
//	<name> apply-configuration --input-dir DIR --output-dir DIR [--now RFC3339] [--controllers a,-b,*]
//
// input-resources and output-resources print their YAML document on stdout and nothing
// else. apply-configuration writes the output directory, reports each controller's result
// on stderr, and fails when a controller failed or a write was undeclared. Errors are
// returned, not printed: main prints them and chooses the exit code.
func (o *Operator) Command() *cobra.Command {
	root := &cobra.Command{
		Use:           o.Name,
		Short:         o.Name + " under the multi-operator-manager contract",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(o.inputResourcesCommand(), o.outputResourcesCommand(), o.applyConfigurationCommand())
	return root
}

// Main is an operator binary's whole main function: it builds the operator with build, runs
// its command line (Command) on os.Args until SIGINT or SIGTERM, and exits with code 1 after
// printing the error on stderr when building or running fails.
//
//	func main() { sdk.Main(func() (*sdk.Operator, error) { return myoperator.New() }) }
func Main(build func() (*Operator, error)) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	op, err := build()
	if err == nil {
		err = op.Command().ExecuteContext(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		stop()
		os.Exit(1)
	}
}

func (o *Operator) inputResourcesCommand() *cobra.Command {
	return printCommand("input-resources", "Print what apply-configuration reads, as YAML", func() ([]byte, error) {
		return contract.MarshalInputResources(o.PrintedInputResources())
	})
}

func (o *Operator) outputResourcesCommand() *cobra.Command {
	return printCommand("output-resources", "Print what apply-configuration may write, per class, as YAML", func() ([]byte, error) {
		return contract.MarshalOutputResources(&o.OutputResources)
	})
}

// printCommand is a command without arguments that prints the document marshal returns.
func printCommand(use, short string, marshal func() ([]byte, error)) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := marshal()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		},
	}
}

// PrintedInputResources returns the input-resources document as the contract's command
// prints it: the declared inputs, plus the exact and generated-name entries of the
// Configuration outputs, which an operator must be able to read back.
func (o *Operator) PrintedInputResources() *contract.InputResources {
	in := o.InputResources
	acr := in.ApplyConfigurationResources
	acr.ExactResources = append(slices.Clone(acr.ExactResources), o.OutputResources.ConfigurationResources.ExactResources...)
	acr.GeneratedNameResources = append(slices.Clone(acr.GeneratedNameResources), o.OutputResources.ConfigurationResources.GeneratedNameResources...)
	in.ApplyConfigurationResources = acr
	return &in
}

// applyConfigurationFlags are the flags of apply-configuration, as typed.
type applyConfigurationFlags struct {
	inputDir, outputDir, now string
	controllers              []string
}

// toOptions validates the flags and turns them into Options.
func (f applyConfigurationFlags) toOptions() (Options, error) {
	opts := Options{InputDir: f.inputDir, OutputDir: f.outputDir, Controllers: f.controllers}
	var errs []error
	if f.inputDir == "" {
		errs = append(errs, errors.New("--input-dir is required"))
	}
	if f.outputDir == "" {
		errs = append(errs, errors.New("--output-dir is required"))
	}
	if f.now != "" {
		t, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			errs = append(errs, fmt.Errorf("--now %q: not an RFC3339 time: %w", f.now, err))
		}
		opts.Now = t
	}
	return opts, errors.Join(errs...)
}

func (o *Operator) applyConfigurationCommand() *cobra.Command {
	f := &applyConfigurationFlags{}
	cmd := &cobra.Command{
		Use:   "apply-configuration --input-dir DIR --output-dir DIR",
		Short: "Run the controllers once over an input directory and record what they would write",
		Long: `apply-configuration reads a must-gather-like input directory, runs every enabled controller
once against it, offline, and writes every write request it would have made into the output
directory, filed by cluster class, with controller-results.yaml. It exits non-zero when a
controller failed or a write matched no declared output resource.`,
		Example: "  " + o.Name + " apply-configuration --input-dir test/input-dir --output-dir /tmp/out --now 2025-01-01T00:00:00Z",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.toOptions()
			if err != nil {
				return err
			}
			if opts.Now.IsZero() {
				opts.Now = time.Now()
			}
			ctx := cmd.Context()
			if _, err := logr.FromContext(ctx); err != nil {
				ctx = logr.NewContext(ctx, stderrLogger(cmd.ErrOrStderr()))
			}
			out, err := o.ApplyConfiguration(ctx, opts)
			if out != nil && out.ControllerResults != nil {
				for _, r := range out.ControllerResults.ControllerResults {
					fmt.Fprintf(cmd.ErrOrStderr(), "controller %s: %s\n", r.ControllerName, r.Status)
				}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&f.inputDir, "input-dir", f.inputDir, "the must-gather-like input directory")
	cmd.Flags().StringVar(&f.outputDir, "output-dir", f.outputDir, "the directory to write the recorded requests to; must be empty or absent")
	cmd.Flags().StringVar(&f.now, "now", f.now, "the time the controllers see, RFC3339; default the current time")
	cmd.Flags().StringSliceVar(&f.controllers, "controllers", f.controllers, "controllers to run: * for all, name to enable, -name to disable; default *")
	return cmd
}

// stderrLogger logs key/value lines to w.
func stderrLogger(w io.Writer) logr.Logger {
	return funcr.New(func(prefix, args string) {
		if prefix != "" {
			fmt.Fprintf(w, "%s: %s\n", prefix, args)
			return
		}
		fmt.Fprintln(w, args)
	}, funcr.Options{})
}
