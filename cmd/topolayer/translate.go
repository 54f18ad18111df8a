package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/mom/contract"
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
  topolayer translate --config examples/standalone.yaml --from examples/outputs/sample --to /tmp/translated`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
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
func (o *TranslateOptions) Run(context.Context) error {
	if err := o.load(); err != nil {
		return err
	}
	plan, err := o.plan()
	if err != nil {
		return err
	}
	if err := rejectedError(plan); err != nil {
		return err
	}
	if err := writeTranslated(o.To, plan, contract.WriteOptions{NameKey: contract.NameKey(o.NameKey)}, o.Overwrite); err != nil {
		return err
	}
	s := plan.Summary
	fmt.Fprintf(o.Out, "wrote %s: %d mutations to apply, %d absorbed, %d dropped\n", o.To, s.Apply, s.Absorbed, s.Dropped)
	return nil
}

// writeTranslated writes the plan's mutations and plan.json into a fresh directory beside to,
// then renames it into place, so to is either the old content or the whole new one.
func writeTranslated(to string, plan *translate.Plan, opts contract.WriteOptions, overwrite bool) error {
	to = filepath.Clean(to)
	if entries, err := os.ReadDir(to); err == nil && len(entries) > 0 && !overwrite {
		return fmt.Errorf("--to %s: directory is not empty (use --overwrite to replace it)", to)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--to %s: %w", to, err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(to), "."+filepath.Base(to)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, "new")
	if err := contract.WriteFolders(staged, plan.ByCluster(), opts); err != nil {
		return err
	}
	js, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(staged, PlanFile), append(js, '\n'), 0o644); err != nil {
		return err
	}
	if _, err := os.Stat(to); err == nil {
		if err := os.Rename(to, filepath.Join(tmp, "old")); err != nil {
			return fmt.Errorf("--to %s: %w", to, err)
		}
	}
	return os.Rename(staged, to)
}
