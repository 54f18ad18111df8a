package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/prune"
)

// PruneOptions are the options of `topolayer prune`.
type PruneOptions struct {
	InputResourcesFile string // --input-resources
	From               string // --from
	To                 string // --to
	Overwrite          bool   // --overwrite

	IOStreams
}

// NewCmdPrune builds `topolayer prune`.
func NewCmdPrune(streams IOStreams) *cobra.Command {
	o := &PruneOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "prune --input-resources FILE --from MUST-GATHER --to DIR",
		Short: "Cut a must-gather down to an operator's input directory, as upstream's pruner does",
		Long: `Prune reads what an operator declares it reads (the applyConfigurationResources of its
input-resources: exact, label-selected and referenced resources) from a must-gather directory
and writes them as an input directory, byte for byte what the multi-operator-manager's
` + "`create-input-resources from-must-gather`" + ` writes: one list per kind and namespace, the objects
in the order they were found, every field kept (managedFields, resourceVersion, status).
Objects that do not exist are skipped; generatedNameResources are not read.

Unlike gather, it reads no cluster and changes nothing in the objects. The must-gather is
read with the input directory's rules: a file out of place is an error naming it. The
directory appears whole or not at all.`,
		Example: `  # From the repository's directory, with the shared corpus beside it:
  topolayer prune \
    --input-resources ../shared/corpus/multi-operator-manager/pkg/library/libraryinputresources/test-data/indirect-references-01/input-resources.yaml \
    --from ../shared/corpus/multi-operator-manager/pkg/library/libraryinputresources/test-data/indirect-references-01/input-dir \
    --to /tmp/pruned --overwrite`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.InputResourcesFile, "input-resources", o.InputResourcesFile, "the operator's input-resources document")
	f.StringVar(&o.From, "from", o.From, "must-gather directory (the folder holding cluster-scoped-resources/ and namespaces/)")
	f.StringVar(&o.To, "to", o.To, "input directory to write; must be absent or empty unless --overwrite")
	f.BoolVar(&o.Overwrite, "overwrite", o.Overwrite, "replace --to if it already has content")
	return cmd
}

// Complete cleans the paths.
func (o *PruneOptions) Complete() error {
	for _, p := range []*string{&o.InputResourcesFile, &o.From, &o.To} {
		if *p != "" {
			*p = filepath.Clean(*p)
		}
	}
	return nil
}

// Validate checks the flags without side effects.
func (o *PruneOptions) Validate() error {
	errs := requiredFlags([]flagValue{{"--input-resources", o.InputResourcesFile}, {"--from", o.From}, {"--to", o.To}})
	if o.From != "" && o.From == o.To {
		errs = append(errs, errors.New("--to must not be --from"))
	}
	return errors.Join(errs...)
}

// Run prunes the must-gather and writes the input directory.
func (o *PruneOptions) Run(ctx context.Context) error {
	data, err := os.ReadFile(o.InputResourcesFile)
	if err != nil {
		return fmt.Errorf("--input-resources: %w", err)
	}
	declared, err := contract.ParseInputResources(data)
	if err != nil {
		return fmt.Errorf("--input-resources %s: %w", o.InputResourcesFile, err)
	}
	if fi, err := os.Stat(o.From); err != nil {
		return fmt.Errorf("--from: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("--from %s: not a directory", o.From)
	}
	in, err := contract.ReadInputDir(o.From, contract.ReadOptions{})
	if err != nil {
		return fmt.Errorf("--from %s: %w", o.From, err)
	}
	lists, err := prune.Prune(in, declared.ApplyConfigurationResources)
	if err != nil {
		return fmt.Errorf("--input-resources %s: %w", o.InputResourcesFile, err)
	}
	if err := replaceDir(o.To, o.Overwrite, func(staged string) error {
		return prune.Write(staged, lists)
	}); err != nil {
		return err
	}
	objects := 0
	for _, l := range lists {
		objects += len(l.Items)
	}
	fmt.Fprintf(o.Out, "pruned %d objects into %d files in %s\n", objects, len(lists), o.To)
	return nil
}
