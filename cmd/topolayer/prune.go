package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/prune"
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

Unlike gather, it reads no cluster and changes nothing in the objects. --from is a
must-gather as ` + "`oc adm must-gather`" + ` writes it (the directory it creates, or the one image folder
inside it) or an input directory. Only what is where an input directory keeps resources is
read; the rest (timestamp, event-filter.html, pod logs under namespaces/<ns>/pods/,
host_service_logs/...) is ignored and listed on stderr, each namespace's folders as one line.
A resource file that cannot be read is an error naming it. Label selectors may have
matchExpressions, as upstream's pruner applies them. The directory appears whole or not at
all.`,
		Example: `  # From the repository's directory, with the shared corpus beside it:
  topolayer prune \
    --input-resources ../shared/corpus/multi-operator-manager/pkg/library/libraryinputresources/test-data/indirect-references-01/input-resources.yaml \
    --from ../shared/corpus/multi-operator-manager/pkg/library/libraryinputresources/test-data/indirect-references-01/input-dir \
    --to /tmp/pruned --overwrite`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.InputResourcesFile, "input-resources", o.InputResourcesFile, "the operator's input-resources document")
	f.StringVar(&o.From, "from", o.From, "must-gather directory (the folder holding cluster-scoped-resources/ and namespaces/)")
	addOutputDirFlags(cmd, &o.To, &o.Overwrite, "input directory")
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
	declared, err := prune.ParseInputResources(data)
	if err != nil {
		return fmt.Errorf("--input-resources %s: %w", o.InputResourcesFile, err)
	}
	if fi, err := os.Stat(o.From); err != nil {
		return fmt.Errorf("--from: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("--from %s: not a directory", o.From)
	}
	mg, err := prune.ReadMustGather(o.From, contract.ReadOptions{})
	if err != nil {
		return fmt.Errorf("--from %s: %w", o.From, err)
	}
	if mg.Root != o.From {
		fmt.Fprintf(o.ErrOut, "reading the must-gather in %s\n", mg.Root)
	}
	writeIgnored(o.ErrOut, mg.Ignored)
	lists, err := prune.Prune(mg.Input, declared.ApplyConfigurationResources)
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

// writeIgnored says what of the must-gather was not read: one line per path, the names of
// namespaces replaced by * and counted, so that pod logs take one line, not one a namespace.
func writeIgnored(w io.Writer, ignored []string) {
	if len(ignored) == 0 {
		return
	}
	var shapes []string
	count := map[string]int{}
	for _, p := range ignored {
		parts := strings.Split(p, "/")
		for i := 0; i+1 < len(parts); i++ {
			if parts[i] == "namespaces" && parts[i+1] != "" {
				parts[i+1] = "*"
				break
			}
		}
		shape := strings.Join(parts, "/")
		if count[shape] == 0 {
			shapes = append(shapes, shape)
		}
		count[shape]++
	}
	fmt.Fprintf(w, "ignored %d entries that are not resources:\n", len(ignored))
	for _, s := range shapes {
		if n := count[s]; n > 1 {
			fmt.Fprintf(w, "  %s (%d)\n", s, n)
		} else {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
}
