package manager

import (
	"errors"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// output is an output directory of n mutations whose controller results name refused
// Deletes of the given secrets in openshift-authentication.
func output(n int, refused ...string) *contract.OutputDir {
	out := &contract.OutputDir{Mutations: make([]contract.Mutation, n), ControllerResults: &contract.ControllerResults{}}
	for _, name := range refused {
		out.ControllerResults.ControllerResults = append(out.ControllerResults.ControllerResults, contract.ControllerResult{
			ControllerName: "resource-sync", Status: contract.ControllerFailed,
			Errors: []contract.ErrorDetails{{Message: `an error on the server ("request namespace \"openshift-authentication\" does not equal body namespace \"\"") has prevented the request from succeeding (delete secrets ` + name + `)`}},
		})
	}
	return out
}

// outputWrites counts an output's mutations and refused Deletes, as its plan would.
func outputWrites(out *contract.OutputDir) int {
	return len(out.Mutations) + len(out.ControllerResults.RefusedDeletes())
}

func TestBestDraw(t *testing.T) {
	exit1 := &runner.CrashError{ExitCode: 1}
	killed := &runner.CrashError{ExitCode: -1, Signal: "killed"}
	for name, tc := range map[string]struct {
		draws []draw
		want  int
	}{
		"one draw":                        {draws: []draw{{out: output(3)}}, want: 0},
		"one draw, failed: reported":      {draws: []draw{{runErr: &runner.CrashError{ExitCode: -1, Signal: "killed"}}}, want: 0},
		"the draw that wrote the most":    {draws: []draw{{out: output(3)}, {out: output(5)}, {out: output(4)}}, want: 1},
		"the first among equals":          {draws: []draw{{out: output(2)}, {out: output(2)}}, want: 0},
		"a refused Delete counts":         {draws: []draw{{out: output(3)}, {out: output(3, "v4-0-config-user-idp-1-file-data")}}, want: 1},
		"failed controllers still count":  {draws: []draw{{out: output(1)}, {out: output(2), runErr: exit1}}, want: 1},
		"a killed draw is never applied":  {draws: []draw{{out: output(1)}, {out: output(9), runErr: killed}}, want: 0},
		"an unreadable draw is never":     {draws: []draw{{out: output(9), readErr: errors.New("bad")}, {out: output(1)}}, want: 1},
		"none usable: the first, to fail": {draws: []draw{{runErr: killed}, {readErr: errors.New("bad")}}, want: 0},
	} {
		t.Run(name, func(t *testing.T) {
			if got := bestDraw(tc.draws, outputWrites); got != tc.want {
				t.Errorf("bestDraw = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestDrawsFor(t *testing.T) {
	st := &operatorState{Operator: Operator{Draws: 4}}
	for trigger, want := range map[string]int{
		TriggerStart: 4, TriggerChange: 4, TriggerConnect: 4, TriggerHostedControlPlane: 4,
		TriggerOwnWrites: 1, TriggerResync: 1,
	} {
		if got := st.drawsFor(trigger); got != want {
			t.Errorf("%s: %d draws, want %d", trigger, got, want)
		}
	}
	if got := (&operatorState{}).drawsFor(TriggerChange); got != 1 {
		t.Errorf("Draws unset: %d draws, want 1", got)
	}
}

func TestDrawAll(t *testing.T) {
	killed := &runner.CrashError{ExitCode: -1, Signal: "killed"}
	for name, tc := range map[string]struct {
		errs []error // each draw's run error
		want int     // draws made
	}{
		"all drawn":                        {errs: []error{nil, nil, nil}, want: 3},
		"failed controllers: drawn again":  {errs: []error{&runner.CrashError{ExitCode: 1}, nil, nil}, want: 3},
		"killed: no more draws after it":   {errs: []error{nil, killed, nil}, want: 2},
		"a failure to start: stop at once": {errs: []error{errors.New("exec: not found"), nil}, want: 1},
	} {
		t.Run(name, func(t *testing.T) {
			got := drawAll(len(tc.errs), func(i int) draw { return draw{out: output(i), runErr: tc.errs[i]} })
			if len(got) != tc.want {
				t.Errorf("%d draws, want %d", len(got), tc.want)
			}
		})
	}
}
