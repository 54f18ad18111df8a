package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/topolayer/topolayer/internal/mom/scheduler"
)

// settle is how long (real time) the harness waits for the scheduler's goroutines to react
// before it moves the fake clock again. Only lateness, never earliness, can come of a slow
// goroutine, so the tests assert lower bounds exactly and upper bounds loosely.
const settle = 2 * time.Millisecond

// harness runs a Scheduler on a fake clock and collects its events through the Observer.
type harness struct {
	t      *testing.T
	clock  *clocktesting.FakeClock
	reg    *prometheus.Registry
	opts   scheduler.Options
	s      *scheduler.Scheduler
	events chan scheduler.Event
	all    []scheduler.Event // received, in order

	cancel   context.CancelFunc
	stopped  chan error
	stopOnce sync.Once
	stopErr  error
}

func newHarness(t *testing.T, opts scheduler.Options) *harness {
	t.Helper()
	h := &harness{
		t:       t,
		clock:   clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		reg:     prometheus.NewRegistry(),
		events:  make(chan scheduler.Event, 100000),
		stopped: make(chan error, 1),
	}
	opts.Clock = h.clock
	opts.Registerer = h.reg
	opts.Observer = func(e scheduler.Event) { h.events <- e }
	h.opts = opts
	return h
}

// start builds the scheduler, adds the operators (each gets its initial run) and starts it.
func (h *harness) start(run scheduler.RunFunc, operators ...string) {
	h.t.Helper()
	s, err := scheduler.New(h.opts, run)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	h.s = s
	for _, op := range operators {
		s.Add(op)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.stopped <- s.Start(ctx) }()
	h.t.Cleanup(func() {
		if err := h.stop(); err != nil {
			h.t.Errorf("Start: %v", err)
		}
	})
}

// stop cancels Start's context and waits for Start to return.
func (h *harness) stop() error {
	h.stopOnce.Do(func() {
		h.cancel()
		select {
		case h.stopErr = <-h.stopped:
		case <-time.After(10 * time.Second):
			h.stopErr = fmt.Errorf("Start did not return")
		}
	})
	return h.stopErr
}

// match selects events by type and, unless empty, operator.
type match struct {
	typ scheduler.EventType
	op  string
}

func (m match) ok(e scheduler.Event) bool {
	return e.Type == m.typ && (m.op == "" || e.Operator == m.op)
}

func (m match) String() string {
	if m.op == "" {
		return string(m.typ)
	}
	return fmt.Sprintf("%s of %s", m.typ, m.op)
}

// poll returns the next event that m selects, waiting up to wait real time. Events are read
// in order, once: those before the match are skipped (they stay in h.all).
func (h *harness) poll(m match, wait time.Duration) (scheduler.Event, bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case e := <-h.events:
			h.all = append(h.all, e)
			if m.ok(e) {
				return e, true
			}
		case <-timer.C:
			return scheduler.Event{}, false
		}
	}
}

// waitFor waits, without moving the clock, for an event that needs no time to pass.
func (h *harness) waitFor(m match) scheduler.Event {
	h.t.Helper()
	e, ok := h.poll(m, 10*time.Second)
	if !ok {
		h.t.Fatalf("no %s at %s", m, h.clock.Now().Format(time.TimeOnly))
	}
	return e
}

// advanceUntil moves the clock by step until an event that m selects arrives, failing after
// limit of fake time.
func (h *harness) advanceUntil(step, limit time.Duration, m match) scheduler.Event {
	h.t.Helper()
	deadline := h.clock.Now().Add(limit)
	for {
		if e, ok := h.poll(m, settle); ok {
			return e
		}
		if !h.clock.Now().Before(deadline) {
			h.t.Fatalf("no %s within %v", m, limit)
		}
		h.clock.Step(step)
	}
}

// expectNone moves the clock over window, by step, and fails on any event that m selects.
func (h *harness) expectNone(step, window time.Duration, m match) {
	h.t.Helper()
	end := h.clock.Now().Add(window)
	for {
		if e, ok := h.poll(m, settle); ok {
			h.t.Fatalf("unexpected %s (run %d) at %s", m, e.Run, e.Time.Format(time.TimeOnly))
		}
		if !h.clock.Now().Before(end) {
			return
		}
		h.clock.Step(step)
	}
}

// seen returns the events received so far that m selects.
func (h *harness) seen(m match) []scheduler.Event {
	var out []scheduler.Event
	for _, e := range h.all {
		if m.ok(e) {
			out = append(out, e)
		}
	}
	return out
}

// metric reads one counter or gauge from the harness's registry (0 if absent).
func (h *harness) metric(name string, labels ...string) float64 {
	h.t.Helper()
	families, err := h.reg.Gather()
	if err != nil {
		h.t.Fatalf("gather metrics: %v", err)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !labelsMatch(m.GetLabel(), want) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

func labelsMatch(got []*dto.LabelPair, want map[string]string) bool {
	n := 0
	for _, l := range got {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}
