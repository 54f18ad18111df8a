package manager

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/topolayer/topolayer/topology"
)

// countingStatus counts the status writes; fail makes them fail.
type countingStatus struct {
	writes int
	fail   bool
}

func (c *countingStatus) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	c.writes++
	if c.fail {
		return errors.New("refused")
	}
	return nil
}

// TestRecord: the status object is written when a run changed something or its outcome
// differs from what the object holds, at most once per run; events are sent on transitions
// only.
func TestRecord(t *testing.T) {
	succeeded := RunRecord{Operator: "op", Result: ResultSucceeded, Inputs: 3, Mutations: 2, Digest: "aaa"}
	with := func(r RunRecord, edit func(*RunRecord)) RunRecord {
		edit(&r)
		return r
	}
	unchanged := with(succeeded, func(r *RunRecord) { r.Unchanged, r.Trigger, r.Causes = 2, TriggerChange, []string{"c:configmaps ns/x"} })
	for _, tc := range []struct {
		name                  string
		runs                  []RunRecord
		failWrites            bool
		wantWrites, wantEvent int
	}{
		{"the first run", []RunRecord{succeeded}, false, 1, 1},
		{"an unchanged run after it: nothing", []RunRecord{succeeded, unchanged, unchanged}, false, 1, 1},
		{"a run that applied: written, no event", []RunRecord{succeeded, with(succeeded, func(r *RunRecord) { r.Applied = 1 })}, false, 2, 1},
		{"other outputs that applied nothing (timestamps): nothing", []RunRecord{succeeded, with(unchanged, func(r *RunRecord) { r.Digest = "bbb" })}, false, 1, 1},
		{"another input count: written, no event", []RunRecord{succeeded, with(unchanged, func(r *RunRecord) { r.Inputs = 4 })}, false, 2, 1},
		{"a failure and back: written, events", []RunRecord{succeeded, with(unchanged, func(r *RunRecord) { r.Result, r.Message = ResultFailed, "boom" }), unchanged}, false, 3, 3},
		{"the same failure again: nothing", []RunRecord{with(unchanged, func(r *RunRecord) { r.Result, r.Message = ResultFailed, "boom" }), with(unchanged, func(r *RunRecord) { r.Result, r.Message = ResultFailed, "boom" })}, false, 1, 1},
		{"a failed write is retried", []RunRecord{succeeded, unchanged}, true, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &countingStatus{fail: tc.failWrites}
			rec := events.NewFakeRecorder(100)
			m := &Manager{log: logr.Discard(), status: topology.Status{Cluster: "home", Namespace: "status"}, statusWriter: w, opts: Options{Recorder: rec}}
			st := &operatorState{Operator: Operator{Name: "op"}}
			for i, r := range tc.runs {
				r.Run = int64(i + 1)
				m.record(t.Context(), st, r)
			}
			if w.writes != tc.wantWrites {
				t.Errorf("%d status writes, want %d", w.writes, tc.wantWrites)
			}
			if n := len(rec.Events); n != tc.wantEvent {
				t.Errorf("%d events, want %d", n, tc.wantEvent)
			}
		})
	}
}
