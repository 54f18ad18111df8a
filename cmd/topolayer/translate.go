package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/contract"
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

// Run translates and writes the directory.
func (o *TranslateOptions) Run(ctx context.Context) error {
	plan, err := o.acceptedPlan(ctx)
	if err != nil {
		return err
	}
	if err := writeTranslated(o.To, plan, contract.WriteOptions{NameKey: contract.NameKey(o.NameKey)}, o.Overwrite); err != nil {
		return err
	}
	s := plan.Summary
	fmt.Fprintf(o.Out, "wrote %s: %d mutations to apply, %d absorbed, %d dropped\n", o.To, s.Apply, s.Absorbed, s.Dropped)
	return nil
}

// writeTranslated writes the plan's mutations and plan.json into to, whole or not at all.
func writeTranslated(to string, plan *translate.Plan, opts contract.WriteOptions, overwrite bool) error {
	return replaceDir(to, overwrite, func(staged string) error {
		if err := contract.WriteFolders(staged, plan.ByCluster(), opts); err != nil {
			return err
		}
		js, err := json.MarshalIndent(plan, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(staged, PlanFile), append(js, '\n'), 0o644)
	})
}
