package manager

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// offlineRunner fails as an operator without network does: a controller's error and its
// stderr say what it could not reach.
type offlineRunner struct {
	controllerError, stderr string
}

func (offlineRunner) Resources(context.Context) (*contract.InputResources, *contract.OutputResources, error) {
	return &contract.InputResources{}, &contract.OutputResources{}, nil
}

func (r offlineRunner) Run(_ context.Context, req runner.Request) (*runner.Result, error) {
	out := &contract.OutputDir{ControllerResults: &contract.ControllerResults{ControllerResults: []contract.ControllerResult{
		{ControllerName: "config-observer", Status: contract.ControllerFailed, Errors: []contract.ErrorDetails{{Message: r.controllerError}}},
		{ControllerName: "other", Status: contract.ControllerSucceeded},
	}}}
	if err := contract.WriteOutputDir(req.OutputDir, out, contract.WriteOptions{}); err != nil {
		return nil, err
	}
	return &runner.Result{Operator: req.Operator, ExitCode: 1, Stderr: r.stderr, Sandbox: "netns"},
		&runner.CrashError{Operator: req.Operator, Command: "apply-configuration", ExitCode: 1}
}

// TestRunDirsNetworkNeeded: a run that failed for lack of network names, in its record,
// what it tried to reach and where to allow it.
func TestRunDirsNetworkNeeded(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		controllerError, stderr string
		want                    []string
	}{
		{"a controller's error", `Get "https://127.0.0.1:41233/.well-known/openid-configuration": dial tcp 127.0.0.1:41233: connect: network is unreachable`, "", []string{"127.0.0.1:41233"}},
		{"stderr", "failed", "E1128 dial tcp: lookup idp.example.com on 10.0.0.10:53: dial udp 10.0.0.10:53: connect: network is unreachable\n", []string{"idp.example.com"}},
		{"another failure", "the secret is missing", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Manager{opts: Options{Now: time.Now}}
			st := &operatorState{Operator: Operator{Name: "cao", Runner: offlineRunner{tc.controllerError, tc.stderr}}}
			var rec RunRecord
			_, runErr, readErr, err := m.runDirs(context.Background(), st, filepath.Join(t.TempDir(), "run"), nil, &rec, time.Now())
			if err != nil || readErr != nil || runErr == nil {
				t.Fatalf("runDirs: err=%v readErr=%v runErr=%v", err, readErr, runErr)
			}
			if !slices.Equal(rec.NetworkNeeded, tc.want) {
				t.Errorf("NetworkNeeded = %q, want %q", rec.NetworkNeeded, tc.want)
			}
		})
	}
	if got := networkHint("cao", []string{"127.0.0.1:41233"}); !strings.Contains(got, "operator cao needed network to 127.0.0.1:41233; add it to operators[].egress") {
		t.Errorf("hint: %s", got)
	}
}
