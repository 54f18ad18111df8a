package manager

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/routing"
)

// draw is one run of the operator over a run's inputs: the contract's apply-configuration
// runs its controllers in a random order, so two draws over the same inputs may write
// different things (Operator.Draws).
type draw struct {
	out             *contract.OutputDir
	runErr, readErr error
	res             *runner.Result
	// writes is how much its outputs would write (bestDraw sets it).
	writes int
}

// usable says whether the draw's outputs may be applied at all: read whole, and the
// operator exited zero or non-zero (some controllers failed), not killed or timed out.
func (d draw) usable() bool {
	return d.readErr == nil && d.out != nil && (d.runErr == nil || exitedNonZero(d.runErr))
}

// drawAll runs n draws, draw i by run(i), and returns them: fewer when one was killed or
// timed out (the operator is broken, not unlucky: drawing again would only wait longer).
func drawAll(n int, run func(i int) draw) []draw {
	draws := make([]draw, 0, n)
	for i := range n {
		d := run(i)
		draws = append(draws, d)
		if d.runErr != nil && !exitedNonZero(d.runErr) {
			break
		}
	}
	return draws
}

// bestDraw returns the index of the draw to apply: the usable one that writes the most
// (writes counts what a draw's outputs would write), the first among equals; the first
// draw when none is usable, so that its failure is reported. It sets each draw's writes.
func bestDraw(draws []draw, writes func(*contract.OutputDir) int) int {
	if len(draws) < 2 {
		return 0
	}
	best := -1
	for i := range draws {
		d := &draws[i]
		if !d.usable() {
			continue
		}
		d.writes = writes(d.out)
		if best < 0 || d.writes > draws[best].writes {
			best = i
		}
	}
	return max(best, 0)
}

// drawsFor returns how many draws a run with trigger gets: Operator.Draws after a change of
// what the operator reads (and at start, after a new connection, or a change of the
// HostedControlPlane), where a controller may act on a transition it sees only once; one
// for the runs its own writes trigger and the resync runs.
func (st *operatorState) drawsFor(trigger string) int {
	switch trigger {
	case TriggerOwnWrites, TriggerResync:
		return 1
	}
	return max(st.Draws, 1)
}

// recordDraws names, in the record and the log, what the draws of a run wrote and which
// one is applied. A binary's draws stay in the run's directory (output, output-2, ...).
func recordDraws(ctx context.Context, draws []draw, chosen int, rec *RunRecord) {
	if len(draws) < 2 {
		return
	}
	writes := make([]string, len(draws))
	for i, d := range draws {
		writes[i] = fmt.Sprint(d.writes)
		if !d.usable() {
			writes[i] = "failed"
		}
	}
	rec.Draws = fmt.Sprintf("%d draws wrote %s; draw %d applied", len(draws), strings.Join(writes, ", "), chosen+1)
	logr.FromContextOrDiscard(ctx).V(1).Info("draws", "writes", writes, "applied", chosen+1)
}

// drawDir is the output directory of draw i (from 0) of a run in dir.
func drawDir(dir string, i int) string {
	if i == 0 {
		return filepath.Join(dir, "output")
	}
	return filepath.Join(dir, fmt.Sprintf("output-%d", i+1))
}

// planWrites counts what outputs of the operator would write: the entries of their plan
// that are applied, the Deletes recovered from the contract's refusals included (they are
// read from controller results and status conditions, not from mutations). It plans only
// when a run has more than one draw to choose from.
func (m *Manager) planWrites(st *operatorState) func(*contract.OutputDir) int {
	return func(out *contract.OutputDir) int {
		e, ok := m.currentProfile().engines[st.Name]
		if !ok {
			return len(out.Mutations)
		}
		n := 0
		for _, entry := range e.Plan(out).Entries {
			if entry.Disposition == routing.Apply {
				n++
			}
		}
		return n
	}
}
