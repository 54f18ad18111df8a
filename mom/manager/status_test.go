package manager

import (
	"context"
	"errors"
	"testing"
	"time"

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

// TestRecord: the status object is written at once when a run's outcome differs from what
// the object holds; the record of a run that changed something with the same outcome is
// deferred (written when the operator is quiet, here at the end, or once records have
// waited statusQuietRuns quiet times), so many such runs make one write; at most one write
// per run; events are sent on transitions only.
func TestRecord(t *testing.T) {
	succeeded := RunRecord{Operator: "op", Result: ResultSucceeded, Inputs: 3, Mutations: 2, Digest: "aaa"}
	with := func(r RunRecord, edit func(*RunRecord)) RunRecord {
		edit(&r)
		return r
	}
	applied := with(succeeded, func(r *RunRecord) { r.Applied = 1 })
	unchanged := with(succeeded, func(r *RunRecord) { r.Unchanged, r.Trigger, r.Causes = 2, TriggerChange, []string{"c:configmaps ns/x"} })
	for _, tc := range []struct {
		name                  string
		runs                  []RunRecord
		failWrites            bool
		step                  time.Duration // the clock's step between runs
		wantWrites, wantEvent int
	}{
		{"the first run", []RunRecord{succeeded}, false, 0, 1, 1},
		{"an unchanged run after it: nothing", []RunRecord{succeeded, unchanged, unchanged}, false, 0, 1, 1},
		{"a run that applied: written, no event", []RunRecord{succeeded, with(succeeded, func(r *RunRecord) { r.Applied = 1 })}, false, 0, 2, 1},
		{"other outputs that applied nothing (timestamps): nothing", []RunRecord{succeeded, with(unchanged, func(r *RunRecord) { r.Digest = "bbb" })}, false, 0, 1, 1},
		{"another input count: written, no event", []RunRecord{succeeded, with(unchanged, func(r *RunRecord) { r.Inputs = 4 })}, false, 0, 2, 1},
		{"a failure and back: written, events", []RunRecord{succeeded, with(unchanged, func(r *RunRecord) { r.Result, r.Message = ResultFailed, "boom" }), unchanged}, false, 0, 3, 3},
		{"the same failure again: nothing", []RunRecord{with(unchanged, func(r *RunRecord) { r.Result, r.Message = ResultFailed, "boom" }), with(unchanged, func(r *RunRecord) { r.Result, r.Message = ResultFailed, "boom" })}, false, 0, 1, 1},
		{"a failed write is retried", []RunRecord{succeeded, unchanged}, true, 0, 2, 1},
		{"runs that applied: one deferred write", []RunRecord{succeeded, applied, applied, applied}, false, time.Second, 2, 1},
		{"runs that applied for longer than the deferral: written on the way", []RunRecord{succeeded, applied, applied, applied, applied}, false, time.Minute, 3, 1},
		{"a transition takes the deferred record's place", []RunRecord{succeeded, applied, with(unchanged, func(r *RunRecord) { r.Result, r.Message = ResultFailed, "boom" })}, false, time.Second, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &countingStatus{fail: tc.failWrites}
			rec := events.NewFakeRecorder(100)
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			m := &Manager{log: logr.Discard(), status: topology.Status{Cluster: "home", Namespace: "status"}, statusWriter: w,
				opts: Options{Recorder: rec, Now: func() time.Time { return clock }, StatusQuiet: 10 * time.Second}}
			st := &operatorState{Operator: Operator{Name: "op"}}
			for i, r := range tc.runs {
				r.Run = int64(i + 1)
				m.record(t.Context(), st, r)
				clock = clock.Add(tc.step)
			}
			m.flushStatus(t.Context(), st) // the operator went quiet
			m.flushStatus(t.Context(), st) // nothing left: no second write
			if w.writes != tc.wantWrites {
				t.Errorf("%d status writes, want %d", w.writes, tc.wantWrites)
			}
			if n := len(rec.Events); n != tc.wantEvent {
				t.Errorf("%d events, want %d", n, tc.wantEvent)
			}
		})
	}
}
