package manager

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/internal/mom/scheduler"
)

func TestTriggerOf(t *testing.T) {
	own := scheduler.Cause{Resource: "configmaps", Name: "a", SelfInflicted: true}
	other := scheduler.Cause{Resource: "configmaps", Name: "b"}
	hcp := scheduler.Cause{Cluster: "management", Group: "hypershift.openshift.io", Resource: "hostedcontrolplanes", Namespace: "clusters-a", Name: "a"}
	for _, tc := range []struct {
		name   string
		causes []scheduler.Cause
		want   string
	}{
		{"the first run", nil, TriggerStart},
		{"a change", []scheduler.Cause{other}, TriggerChange},
		{"own writes only", []scheduler.Cause{own, own}, TriggerOwnWrites},
		{"own writes and a change", []scheduler.Cause{own, other}, TriggerChange},
		{"a new connection", []scheduler.Cause{connectCause("guest")}, TriggerConnect},
		{"a new connection and a change", []scheduler.Cause{connectCause("guest"), other}, TriggerChange},
		{"a resync", []scheduler.Cause{scheduler.ResyncCause}, TriggerResync},
		{"a resync and own writes", []scheduler.Cause{scheduler.ResyncCause, own}, TriggerOwnWrites},
		{"a resync and a new connection", []scheduler.Cause{scheduler.ResyncCause, connectCause("guest")}, TriggerConnect},
		{"the HostedControlPlane changed", []scheduler.Cause{hcp}, TriggerHostedControlPlane},
		{"the HostedControlPlane and own writes", []scheduler.Cause{own, hcp}, TriggerHostedControlPlane},
		{"the HostedControlPlane and a resync", []scheduler.Cause{scheduler.ResyncCause, hcp}, TriggerHostedControlPlane},
		{"the HostedControlPlane and a change", []scheduler.Cause{hcp, other}, TriggerChange},
		{"the HostedControlPlane and a new connection", []scheduler.Cause{hcp, connectCause("guest")}, TriggerChange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := triggerOf(tc.causes); got != tc.want {
				t.Errorf("triggerOf = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestBackoffDelay(t *testing.T) {
	b := scheduler.Backoff{Base: time.Second, Max: 30 * time.Second}
	var got []time.Duration
	for n := 1; n <= 7; n++ {
		got = append(got, backoffDelay(b, n))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
}

func TestDigestOf(t *testing.T) {
	m := func(resource, name, body string) contract.Mutation {
		return contract.Mutation{Class: contract.ClassManagement, Metadata: contract.Metadata{
			Action: contract.ActionApply, Name: name, Namespace: "ns",
			ResourceType: contract.ResourceType{Version: "v1", Resource: resource},
		}, Body: []byte(body)}
	}
	base := []contract.Mutation{m("configmaps", "a", "x"), m("secrets", "b", "y")}
	for _, tc := range []struct {
		name string
		ms   []contract.Mutation
		same bool
	}{
		{"the same outputs", []contract.Mutation{m("configmaps", "a", "x"), m("secrets", "b", "y")}, true},
		{"another order", []contract.Mutation{m("secrets", "b", "y"), m("configmaps", "a", "x")}, true},
		{"an event more: events differ on every run", append([]contract.Mutation{m("events", "e1", "now")}, base...), true},
		{"a body changed", []contract.Mutation{m("configmaps", "a", "z"), m("secrets", "b", "y")}, false},
		{"a mutation less", base[:1], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if same := digestOf(tc.ms) == digestOf(base); same != tc.same {
				t.Errorf("same digest: %v, want %v", same, tc.same)
			}
		})
	}
}

func TestPartialRun(t *testing.T) {
	exit1 := &runner.CrashError{Operator: "cao", Command: "apply-configuration", ExitCode: 1}
	results := func(rs ...contract.ControllerResult) *contract.OutputDir {
		return &contract.OutputDir{HasControllerResults: true, ControllerResults: &contract.ControllerResults{ControllerResults: rs}}
	}
	ok := contract.ControllerResult{ControllerName: "a", Status: contract.ControllerSucceeded}
	failed := contract.ControllerResult{ControllerName: "b", Status: contract.ControllerFailed, Errors: []contract.ErrorDetails{{Message: "no route to host"}, {Message: "again"}}}
	panicked := contract.ControllerResult{ControllerName: "c", Status: contract.ControllerPanicked}
	tests := []struct {
		name       string
		runErr     error
		out        *contract.OutputDir
		readErr    error
		wantFailed []string
		wantErr    string
	}{
		{"success", nil, results(ok), nil, nil, ""},
		{"some controllers failed: applied, reported", exit1, results(ok, failed, panicked), nil,
			[]string{"b: no route to host (and 1 more)", "c: Panicked"}, ""},
		{"non-zero exit, no failure reported: applied, said so", exit1, results(ok), nil,
			[]string{"(none reported failed; the operator exited non-zero)"}, ""},
		{"no controller-results: refused", exit1, &contract.OutputDir{}, nil, nil, "it wrote no controller-results.yaml"},
		{"null controller-results: refused", exit1, &contract.OutputDir{HasControllerResults: true}, nil, nil, "it wrote no controller-results.yaml"},
		{"empty controller-results: refused", exit1, results(), nil, nil, "names no controller"},
		{"unreadable outputs: refused", exit1, nil, errors.New("Unspecified: undeclared"), nil, "the output dir cannot be read: Unspecified: undeclared"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			failed, err := partialRun(tc.runErr, tc.out, tc.readErr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, exit1) {
					t.Fatalf("err = %v, want one that wraps the exit and says %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(failed, tc.wantFailed) {
				t.Errorf("failed = %q, want %q", failed, tc.wantFailed)
			}
		})
	}
}

func TestExitedNonZero(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"exit 1", fmt.Errorf("wrapped: %w", &runner.CrashError{ExitCode: 1}), true},
		{"killed by a signal", &runner.CrashError{ExitCode: -1, Signal: "killed"}, false},
		{"timeout", &runner.TimeoutError{Killed: true}, false},
		{"output too large", &runner.OutputTooLargeError{}, false},
		{"panic in process", &runner.PanicError{Value: "boom"}, false},
		{"other", errors.New("input dir missing"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitedNonZero(tc.err); got != tc.want {
				t.Errorf("exitedNonZero = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEventNote(t *testing.T) {
	long := strings.Repeat("controller: the route is not admitted; ", 60)
	multi := strings.Repeat("é", eventNoteLimit) // two bytes a rune: a cut must not split one
	tests := []struct {
		name, note string
		cut        bool
	}{
		{"short kept", "run 3: 2 applied", false},
		{"at the limit kept", strings.Repeat("x", eventNoteLimit), false},
		{"long cut", long, true},
		{"multi-byte cut at a rune boundary", multi, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := eventNote(tt.note)
			if len(got) > eventNoteLimit || !utf8.ValidString(got) {
				t.Fatalf("eventNote: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
			}
			if cut := got != tt.note; cut != tt.cut {
				t.Fatalf("cut %v, want %v: %q", cut, tt.cut, got)
			}
			if tt.cut && !strings.HasSuffix(got, "status object has all of it)") {
				t.Errorf("a cut note does not say so: %q", got[len(got)-60:])
			}
		})
	}
}
