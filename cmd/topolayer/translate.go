package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

// PlanFile is the name of the plan written beside a translated directory's cluster folders.
const PlanFile = "plan.json"

// TranslateOptions are the options of `topolayer translate`.
type TranslateOptions struct {
	SourceOptions
	To        string // --to
	Overwrite bool   // --overwrite
	NameKey   string // --metadata-name-key

	IOStreams
}

// NewCmdTranslate builds `topolayer translate`.
func NewCmdTranslate(streams IOStreams) *cobra.Command {
	o := &TranslateOptions{NameKey: string(contract.NameKeyName), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "translate --config FILE --from DIR --to DIR",
		Short: "Write an operator's outputs as they would land on each target cluster",
		Long: `Translate reads an operator's apply-configuration output directory and writes, for each
target cluster, the mutations it would receive, in the same mutation-directory format:
<to>/<cluster>/<Action>/..., where <cluster> is "cluster" (standalone) or "management" and
"guest" (hosted), plus <to>/plan.json.

Nothing is written when any mutation is rejected. The directory appears whole or not at all:
it is written beside --to and renamed into place.`,
		Example: `  # Standalone passthrough: the same bodies under <to>/cluster/
  topolayer translate --config examples/standalone.yaml --from examples/outputs/sample-operator --to /tmp/translated`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	addSourceFlags(cmd, &o.SourceOptions)
	cmd.Flags().StringVar(&o.To, "to", o.To, "directory to write; must be absent or empty unless --overwrite")
	cmd.Flags().BoolVar(&o.Overwrite, "overwrite", o.Overwrite, "replace --to if it already has content")
	cmd.Flags().StringVar(&o.NameKey, "metadata-name-key", o.NameKey, `spelling of the name key in metadata files: "name", or the legacy "mame"`)
	return cmd
}

// Validate checks the flags without side effects.
func (o *TranslateOptions) Validate() error {
	errs := []error{o.validate()}
	if o.To == "" {
		errs = append(errs, errors.New("--to is required"))
	}
	if k := contract.NameKey(o.NameKey); k != contract.NameKeyName && k != contract.NameKeyLegacy {
		errs = append(errs, fmt.Errorf("--metadata-name-key %q: must be name or mame", o.NameKey))
	}
	return errors.Join(errs...)
}

// Run translates and writes the directory. It streams: each mutation is read, planned and,
// once its entry is final, written into a staging directory, and its body dropped, so a
// directory of any size is translated in bounded memory; the staging directory replaces --to
// only once every mutation is planned and none is rejected.
func (o *TranslateOptions) Run(ctx context.Context) error {
	readOpts, err := o.loadConfig()
	if err != nil {
		return err
	}
	engine, err := o.topo.Engine(o.Operator, o.declared)
	if err != nil {
		return fmt.Errorf("--config %s: %w", o.ConfigFile, err)
	}
	var plan *translate.Plan
	err = replaceDir(o.To, o.Overwrite, func(staged string) error {
		w, err := contract.NewFolderWriter(staged, contract.WriteOptions{NameKey: contract.NameKey(o.NameKey)})
		if err != nil {
			return err
		}
		closed := false
		defer func() {
			if !closed {
				w.Close()
			}
		}()
		planner := engine.Planner(func(e *translate.Entry) error {
			if e.Disposition != routing.Apply || e.Mutation == nil {
				return nil
			}
			return w.Write(e.Target.Cluster, e.Mutation)
		})
		// The entries settled while reading wait for plan.json in a file beside the
		// staging directory (removed with it), not in memory.
		spill, err := os.CreateTemp(filepath.Dir(staged), "plan-entries-")
		if err != nil {
			return err
		}
		defer spill.Close()
		planner.SpillTo(spill)
		mutations := 0
		out, err := contract.WalkOutputDir(ctx, o.From, readOpts, func(m *contract.Mutation) error {
			mutations++
			planner.Add(m)
			return planner.Err()
		})
		if err != nil {
			return fmt.Errorf("--from: %w", err)
		}
		if mutations == 0 && !out.HasControllerResults {
			return fmt.Errorf("--from %s: %w", o.From, errEmptyOutputDir)
		}
		// The plan settles the entries it still holds (the writer writes them) as it
		// writes plan.json.
		f, err := os.Create(filepath.Join(staged, PlanFile))
		if err != nil {
			return err
		}
		defer f.Close()
		if plan, err = planner.WritePlan(f); err != nil {
			return fmt.Errorf("%s: %w", PlanFile, err)
		}
		if err := rejectedError(plan); err != nil {
			return err
		}
		closed = true
		if err := w.Close(); err != nil {
			return err
		}
		return f.Close()
	})
	if err != nil {
		return err
	}
	s := plan.Summary
	fmt.Fprintf(o.Out, "wrote %s: %d mutations to apply, %d absorbed, %d dropped\n", o.To, s.Apply, s.Absorbed, s.Dropped)
	return nil
}
