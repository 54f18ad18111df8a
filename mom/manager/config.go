package manager

import (
	"path/filepath"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/mom/runner"
	"github.com/topolayer/topolayer/mom/scheduler"
)

// OperatorsFromConfig returns the configured operators, each run as a contract binary in a
// sandbox (runner.Exec) with its limits. A relative command path is resolved against
// baseDir, the directory of the configuration file.
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
		out = append(out, Operator{
			Name:                op.Name,
			Runner:              &runner.Exec{Name: op.Name, Command: cmd, Env: op.Env, Limits: limits},
			ServiceAccount:      op.ServiceAccount,
			Controllers:         op.Controllers,
			Supplements:         op.Supplements,
			OnControllerFailure: op.OnControllerFailure,
			Adopt:               op.Adopt,
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
