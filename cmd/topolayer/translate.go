package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
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
		RunE: cli.RunCommand(o),
	}
	addSourceFlags(cmd, &o.SourceOptions)
	addOutputDirFlags(cmd, &o.To, &o.Overwrite, "directory")
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
	var plan *plans.Plan
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
		planner := engine.Planner(func(e *plans.Entry) error {
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
		stage := startPlanning(planner)
		defer stage.wait()
		out, err := contract.WalkOutputDir(ctx, o.From, readOpts, func(m *contract.Mutation) error {
			mutations++
			return stage.add(m)
		})
		if err == nil {
			err = stage.wait()
		}
		if err != nil {
			return fmt.Errorf("--from: %w", err)
		}
		if mutations == 0 && !out.HasControllerResults {
			return fmt.Errorf("--from %s: %w", o.From, errEmptyOutputDir)
		}
		// The Deletes the contract could not record, recovered from the controllers' errors.
		planner.AddControllerResults(out.ControllerResults)
		if err := planner.Err(); err != nil {
			return fmt.Errorf("--from: %w", err)
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

// planning runs a planner's Add on a goroutine of its own, fed in batches, so that the reader
// reads and parses the next mutations while the planner places, checks and settles these (on
// a machine of several cores, the two halves of translate's critical path overlap). The
// planner is the stage's until wait returns.
type planning struct {
	planner *translate.Planner
	batch   []*contract.Mutation
	batches chan []*contract.Mutation
	done    chan struct{}
	waited  bool
	err     atomic.Pointer[error] // the planner's first error
}

// planningBatch is how many mutations go to the planner at once; planningQueue how many
// batches wait for it before the reader does.
const (
	planningBatch = 64
	planningQueue = 4
)

// startPlanning starts the planner's goroutine. Call wait.
func startPlanning(p *translate.Planner) *planning {
	s := &planning{planner: p, batches: make(chan []*contract.Mutation, planningQueue), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for batch := range s.batches {
			for _, m := range batch {
				if s.err.Load() != nil {
					break
				}
				p.Add(m)
				if err := p.Err(); err != nil {
					s.err.Store(&err)
				}
			}
		}
	}()
	return s
}

// add queues one mutation; it returns the planner's first error, once it has one.
func (s *planning) add(m *contract.Mutation) error {
	if err := s.err.Load(); err != nil {
		return *err
	}
	s.batch = append(s.batch, m)
	if len(s.batch) >= planningBatch {
		s.batches <- s.batch
		s.batch = make([]*contract.Mutation, 0, planningBatch)
	}
	return nil
}

// wait hands the planner the last batch, waits for it to add everything and returns its
// first error. Calls after the first only return that error.
func (s *planning) wait() error {
	if !s.waited {
		s.waited = true
		if len(s.batch) > 0 {
			s.batches <- s.batch
		}
		close(s.batches)
		<-s.done
	}
	if err := s.err.Load(); err != nil {
		return *err
	}
	return nil
}
