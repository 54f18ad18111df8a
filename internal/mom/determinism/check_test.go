package determinism

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// inProcess is an operator that writes, in run i (from 1), what write returns for i, and
// fails with fail(i) when it is not nil.
func inProcess(write func(run int) []contract.Mutation, fail func(run int) error) *runner.InProcess {
	var n atomic.Int32
	return &runner.InProcess{Name: "op", Limits: runner.Limits{Timeout: 5 * time.Second}, Func: func(ctx context.Context, req runner.Request) error {
		i := int(n.Add(1))
		if err := contract.WriteOutputDir(req.OutputDir, &contract.OutputDir{Mutations: write(i)}, contract.WriteOptions{}); err != nil {
			return err
		}
		if fail != nil {
			return fail(i)
		}
		return nil
	}}
}

func TestCheck(t *testing.T) {
	always := func(int) []contract.Mutation { return []contract.Mutation{configMap("syncer", "cm", "a")} }
	oddRuns := func(i int) []contract.Mutation {
		if i%2 == 1 {
			return always(i)
		}
		return nil
	}
	for name, tc := range map[string]struct {
		runner  runner.Runner
		runs    int
		ctx     func() context.Context
		named   []string // the nondeterministic controllers
		wantErr string
	}{
		"deterministic":             {runner: inProcess(always, nil), runs: 3},
		"an object every other run": {runner: inProcess(oddRuns, nil), runs: 4, named: []string{"syncer"}},
		"a run that fails is compared": {
			runner: inProcess(always, func(i int) error {
				if i == 2 {
					return errors.New("boom")
				}
				return nil
			}), runs: 3, named: []string{ExitCodeController},
		},
		"a run that times out stops the check": {
			runner: &runner.InProcess{Name: "op", Limits: runner.Limits{Timeout: 50 * time.Millisecond}, Func: func(ctx context.Context, _ runner.Request) error {
				<-ctx.Done()
				return ctx.Err()
			}},
			runs: 3, wantErr: "determinism check: run 1: ",
		},
		"a canceled check stops": {
			runner: inProcess(always, nil), runs: 3,
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			wantErr: "before run 1: context canceled",
		},
		"one run is not enough": {runner: inProcess(always, nil), runs: 1, wantErr: "1 runs: at least 2"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			report, err := Check(ctx, Options{Runner: tc.runner, Request: runner.Request{InputDir: t.TempDir(), Now: time.Unix(0, 0)}, Runs: tc.runs, WorkDir: t.TempDir()})
			if contracttest.CheckErr(t, err, tc.wantErr) {
				return
			}
			var named []string
			for _, c := range report.Nondeterministic {
				named = append(named, c.Name)
			}
			if strings.Join(named, ",") != strings.Join(tc.named, ",") {
				t.Errorf("named %q, want %q; report %+v", named, tc.named, report)
			}
			if report.Runs != tc.runs {
				t.Errorf("Runs = %d, want %d", report.Runs, tc.runs)
			}
		})
	}
}
