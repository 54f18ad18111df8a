package manager

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/internal/mom/scheduler"
)

// OperatorsFromConfig returns the configured operators, each run as a contract binary in a
// sandbox (runner.Exec) with its limits and its egress. A relative command path is resolved
// against baseDir, the directory of the configuration file. An operator allowed egress starts
// under the running program as its sandbox's init: the program's main calls runner.RunInit
// (see runner.InitArg).
func OperatorsFromConfig(cfg *config.TopologyConfig, baseDir string) []Operator {
	out := make([]Operator, 0, len(cfg.Operators))
	for _, op := range cfg.Operators {
		cmd := append([]string(nil), op.Command...)
		if len(cmd) > 0 && !filepath.IsAbs(cmd[0]) && filepath.Base(cmd[0]) != cmd[0] {
			cmd[0] = filepath.Join(baseDir, cmd[0])
		}
		limits := runner.Limits{Timeout: op.Limits.Timeout.Duration}
		if op.Limits.Memory != nil {
			limits.Memory = op.Limits.Memory.Value()
		}
		if op.Limits.OutputSize != nil {
			limits.OutputSize = op.Limits.OutputSize.Value()
		}
		var resync time.Duration
		if op.Resync != nil {
			resync = op.Resync.Duration
		}
		var egress []runner.Endpoint
		for _, s := range op.Egress {
			if e, err := runner.ParseEndpoint(s); err == nil { // config.Validate refused the others
				egress = append(egress, e)
			}
		}
		out = append(out, Operator{
			Name:                op.Name,
			Resync:              resync,
			Runner:              &runner.Exec{Name: op.Name, Command: cmd, Env: op.Env, Limits: limits, Egress: egress},
			ServiceAccount:      op.ServiceAccount,
			Controllers:         op.Controllers,
			Supplements:         op.Supplements,
			OnControllerFailure: op.OnControllerFailure,
			Adopt:               op.Adopt,
			EnvFromInputs:       op.EnvFromInputs,
			Draws:               op.Draws,
		})
	}
	return out
}

// SchedulerOptions returns the scheduler limits of a (defaulted) configuration.
func SchedulerOptions(cfg *config.TopologyConfig) scheduler.Options {
	s := cfg.Scheduler
	o := scheduler.Options{MaxConcurrent: s.MaxConcurrent, HotLoop: scheduler.HotLoopOptions{MaxSelfTriggers: s.HotLoopThreshold}}
	if s.Debounce != nil {
		o.Debounce = s.Debounce.Duration
	}
	if s.Cooldown != nil {
		o.Cooldown = s.Cooldown.Duration
	}
	if s.MutationsPerMinute > 0 {
		o.MutationsPerMinute = s.MutationsPerMinute
	}
	return o
}

// Linked is an operator linked into this process, an sdk.Operator: it runs in memory, over
// the objects gathered from the caches, with no fork, no exec and no directory on disk.
type Linked interface {
	InMemory(runner.Limits) *runner.InMemory
}

// LinkInProcess gives each operator of ops that linked names the in-memory runner of the
// linked operator, with the limits its configuration sets (its timeout and output size; a
// memory limit does not apply in process). Every linked name must be an operator of ops,
// and none may take its environment from its inputs (it has none of its own).
func LinkInProcess(ops []Operator, linked map[string]Linked) error {
	found := map[string]bool{}
	for i := range ops {
		l, ok := linked[ops[i].Name]
		if !ok {
			continue
		}
		if len(ops[i].EnvFromInputs) > 0 {
			return fmt.Errorf("operator %s: envFromInputs: a linked operator runs in process, with no environment of its own", ops[i].Name)
		}
		var limits runner.Limits
		if exe, ok := ops[i].Runner.(*runner.Exec); ok {
			limits = exe.Limits
		}
		ops[i].Runner = l.InMemory(limits)
		found[ops[i].Name] = true
	}
	var missing []string
	for name := range linked {
		if !found[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("linked operators %v are not in the configuration's operators", missing)
	}
	return nil
}
