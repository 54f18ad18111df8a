package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"

	"github.com/topolayer/topolayer/internal/mom/scheduler"
)

// The Scheduler has controller-runtime's manager.Runnable method set (checked without
// importing the manager package).
var _ interface{ Start(context.Context) error } = (*scheduler.Scheduler)(nil)

func configMap(name string) scheduler.Cause {
	return scheduler.Cause{Cluster: "guest", Resource: "configmaps", Namespace: "openshift-foo", Name: name}
}

func succeed(context.Context, string, []scheduler.Cause) scheduler.Outcome {
	return scheduler.Outcome{Digest: "same"}
}

func TestNewValidatesOptions(t *testing.T) {
	cases := map[string]struct {
		opts    scheduler.Options
		nilRun  bool
		wantErr string // empty: valid
	}{
		"zero options are the defaults": {},
		"negative debounce":             {opts: scheduler.Options{Debounce: -time.Second}, wantErr: "debounce: Invalid value"},
		"negative cooldown":             {opts: scheduler.Options{Cooldown: -time.Second}, wantErr: "cooldown: Invalid value"},
		"negative budget":               {opts: scheduler.Options{MutationsPerMinute: -1}, wantErr: "mutationsPerMinute: Invalid value"},
		"negative concurrency":          {opts: scheduler.Options{MaxConcurrent: -1}, wantErr: "maxConcurrent: Invalid value"},
		"failure backoff max below base": {
			opts:    scheduler.Options{FailureBackoff: scheduler.Backoff{Base: time.Minute, Max: time.Second}},
			wantErr: "failureBackoff.max: Invalid value",
		},
		"negative hot-loop backoff": {
			opts:    scheduler.Options{HotLoop: scheduler.HotLoopOptions{Backoff: scheduler.Backoff{Base: -1}}},
			wantErr: "hotLoop.backoff.base: Invalid value",
		},
		"no run function": {nilRun: true, wantErr: "run: must not be nil"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := scheduler.RunFunc(succeed)
			if tc.nilRun {
				run = nil
			}
			_, err := scheduler.New(tc.opts, run)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("New error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestNewRejectsMetricsRegisteredTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := scheduler.New(scheduler.Options{Registerer: reg}, succeed); err != nil {
		t.Fatalf("first New: %v", err)
	}
	_, err := scheduler.New(scheduler.Options{Registerer: reg}, succeed)
	if are := (prometheus.AlreadyRegisteredError{}); !errors.As(err, &are) {
		t.Fatalf("second New error = %v, want AlreadyRegisteredError", err)
	}
}

// A burst of changes inside the debounce window gives exactly one run, D after the first
// change, with every distinct cause in first-notified order.
func TestDebounceCoalescesABurst(t *testing.T) {
	const debounce = 10 * time.Second
	cases := map[string]struct {
		changes, distinct int
		spacing           time.Duration
	}{
		"50 objects spread over the window": {changes: 50, distinct: 50, spacing: debounce / 51},
		"50 changes of 5 objects":           {changes: 50, distinct: 5, spacing: debounce / 51},
		"50 changes at one instant":         {changes: 50, distinct: 50},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, scheduler.Options{Debounce: debounce})
			h.start(succeed, "op")
			h.waitFor(match{scheduler.RunFinished, "op"}) // the initial run

			first := h.clock.Now()
			var want []scheduler.Cause
			for i := range tc.changes {
				if i > 0 {
					h.clock.Step(tc.spacing)
				}
				c := configMap(fmt.Sprintf("cm-%d", i%tc.distinct))
				if i < tc.distinct {
					want = append(want, c)
				}
				h.s.Notify("op", c)
			}

			e := h.advanceUntil(debounce/100, 3*debounce, match{scheduler.RunStarted, "op"})
			if e.Time.Before(first.Add(debounce)) {
				t.Errorf("run started %v after the first change, before the debounce of %v", e.Time.Sub(first), debounce)
			}
			if !e.Time.Before(first.Add(debounce + debounce/2)) {
				t.Errorf("run started %v after the first change; debounce counts from the first change", e.Time.Sub(first))
			}
			if diff := cmp.Diff(want, e.Causes); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
			h.waitFor(match{scheduler.RunFinished, "op"})
			h.expectNone(debounce/2, 10*debounce, match{scheduler.RunStarted, "op"})

			if got := h.s.Status("op").Runs; got != 2 {
				t.Errorf("runs = %d, want 2 (initial and one for the burst)", got)
			}
			if got := h.metric("topolayer_scheduler_changes_total", "operator", "op"); got != float64(tc.changes) {
				t.Errorf("changes_total = %v, want %d", got, tc.changes)
			}
			if got := h.metric("topolayer_scheduler_debounced_changes_total", "operator", "op"); got != float64(tc.changes-1) {
				t.Errorf("debounced_changes_total = %v, want %d", got, tc.changes-1)
			}
		})
	}
}

// The next run of an operator starts no earlier than Cooldown after the previous run ended,
// whether the change came during or after the run; a change during a run waits for it.
func TestCooldown(t *testing.T) {
	const (
		debounce = time.Second
		runTime  = 5 * time.Second
	)
	cases := map[string]struct {
		cooldown     time.Duration
		notifyDuring bool
		minGap       time.Duration // between the end of run 1 and the start of run 2
	}{
		"change after the run waits for the cooldown":  {cooldown: 30 * time.Second, minGap: 30 * time.Second},
		"change during the run waits for the cooldown": {cooldown: 30 * time.Second, notifyDuring: true, minGap: 30 * time.Second},
		"no cooldown: the debounce decides":            {minGap: debounce},
		"no cooldown, change during the run":           {notifyDuring: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, scheduler.Options{Debounce: debounce, Cooldown: tc.cooldown})
			var runs, inFlight atomic.Int32
			h.start(func(context.Context, string, []scheduler.Cause) scheduler.Outcome {
				if inFlight.Add(1) > 1 {
					t.Error("two runs of one operator at once")
				}
				defer inFlight.Add(-1)
				if runs.Add(1) == 1 {
					if tc.notifyDuring {
						h.s.Notify("op", configMap("during"))
					}
					h.clock.Step(runTime) // the run takes runTime
				}
				return scheduler.Outcome{Digest: "same"}
			}, "op")

			end := h.waitFor(match{scheduler.RunFinished, "op"}).Time
			if !tc.notifyDuring {
				h.s.Notify("op", configMap("after"))
			}
			start := h.advanceUntil(debounce/2, 2*time.Minute, match{scheduler.RunStarted, "op"})
			gap := start.Time.Sub(end)
			if gap < tc.minGap || gap >= tc.minGap+runTime {
				t.Errorf("second run started %v after the first ended, want [%v, %v)", gap, tc.minGap, tc.minGap+runTime)
			}
			if len(start.Causes) != 1 {
				t.Errorf("second run causes = %v, want the one change", start.Causes)
			}
		})
	}
}

// With more operators ready than MaxConcurrent, never more than MaxConcurrent run at once,
// and each still runs.
func TestMaxConcurrent(t *testing.T) {
	operators := []string{"a", "b", "c", "d", "e"}
	for _, limit := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("X=%d", limit), func(t *testing.T) {
			h := newHarness(t, scheduler.Options{MaxConcurrent: limit})
			release, abort := make(chan struct{}), make(chan struct{})
			var running, peak atomic.Int32
			h.start(func(context.Context, string, []scheduler.Cause) scheduler.Outcome {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				select {
				case <-release:
				case <-abort: // the test failed
				}
				running.Add(-1)
				return scheduler.Outcome{}
			}, operators...)
			t.Cleanup(func() { close(abort) }) // runs before the harness stops the scheduler

			ran := map[string]int{}
			started, finished := 0, 0
			for finished < len(operators) {
				want := min(limit, len(operators)-finished)
				for started < finished+want {
					ran[h.waitFor(match{scheduler.RunStarted, ""}).Operator]++
					started++
				}
				if e, ok := h.poll(match{scheduler.RunStarted, ""}, 20*time.Millisecond); ok {
					t.Fatalf("%s started with %d operators running, limit %d", e.Operator, running.Load(), limit)
				}
				if got := h.metric("topolayer_scheduler_running"); got != float64(want) {
					t.Errorf("running gauge = %v, want %d", got, want)
				}
				if got := h.metric("topolayer_scheduler_queue_depth"); got != float64(len(operators)-started) {
					t.Errorf("queue_depth gauge = %v, want %d", got, len(operators)-started)
				}
				release <- struct{}{}
				h.waitFor(match{scheduler.RunFinished, ""})
				finished++
			}
			if got := peak.Load(); got != int32(limit) {
				t.Errorf("peak concurrency = %d, want %d", got, limit)
			}
			for _, op := range operators {
				if ran[op] != 1 {
					t.Errorf("%s ran %d times, want 1", op, ran[op])
				}
			}
		})
	}
}

// A run's mutations are charged to the operator's budget; when it is spent, the next run
// waits until the budget holds one mutation again, and BudgetExhausted is reported once.
func TestMutationBudget(t *testing.T) {
	cases := map[string]struct {
		perMinute, mutations int
		wait                 time.Duration // 0: the next run is not held back
	}{
		"a run spending the budget delays the next until one mutation refills": {perMinute: 6, mutations: 6, wait: 10 * time.Second},
		"a run beyond the budget leaves a debt":                                {perMinute: 6, mutations: 12, wait: 70 * time.Second},
		"budget left":                                                          {perMinute: 6, mutations: 3},
		"unlimited":                                                            {mutations: 1000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, scheduler.Options{MutationsPerMinute: tc.perMinute})
			var runs atomic.Int32
			h.start(func(context.Context, string, []scheduler.Cause) scheduler.Outcome {
				if runs.Add(1) == 1 {
					return scheduler.Outcome{Mutations: tc.mutations}
				}
				return scheduler.Outcome{}
			}, "op")

			end := h.waitFor(match{scheduler.RunFinished, "op"}).Time
			h.s.Notify("op", configMap("x"))
			start := h.advanceUntil(time.Second, 5*time.Minute, match{scheduler.RunStarted, "op"}).Time
			if got := start.Sub(end); got < tc.wait || got >= tc.wait+5*time.Second {
				t.Errorf("next run started %v after the first ended, want [%v, %v)", got, tc.wait, tc.wait+5*time.Second)
			}

			waits := h.seen(match{scheduler.BudgetExhausted, "op"})
			if tc.wait == 0 {
				if len(waits) != 0 {
					t.Errorf("BudgetExhausted reported: %+v", waits)
				}
				return
			}
			if len(waits) != 1 {
				t.Fatalf("BudgetExhausted reported %d times, want once", len(waits))
			}
			if until := waits[0].Until.Sub(end); until < tc.wait || until > tc.wait+time.Millisecond {
				t.Errorf("BudgetExhausted until +%v, want +%v", until, tc.wait)
			}
			if got := h.metric("topolayer_scheduler_budget_waits_total", "operator", "op"); got != 1 {
				t.Errorf("budget_waits_total = %v, want 1", got)
			}
		})
	}
}

// A change notified for one operator runs that operator only; changes for an operator that
// was never added are dropped.
func TestNotifyTriggersOnlyThatOperator(t *testing.T) {
	for _, target := range []string{"a", "b", "c"} {
		t.Run(target, func(t *testing.T) {
			h := newHarness(t, scheduler.Options{Debounce: 5 * time.Second, MaxConcurrent: 3})
			h.start(succeed, "a", "b", "c")
			for range 3 {
				h.waitFor(match{scheduler.RunFinished, ""})
			}
			h.s.Notify("not-added", configMap("x"))
			h.s.Notify(target, configMap("x"))

			if e := h.advanceUntil(time.Second, time.Minute, match{scheduler.RunStarted, ""}); e.Operator != target {
				t.Fatalf("%s ran, want %s", e.Operator, target)
			}
			h.waitFor(match{scheduler.RunFinished, target})
			h.expectNone(10*time.Second, 10*time.Minute, match{scheduler.RunStarted, ""})
			if st := h.s.Status("not-added"); st.Registered {
				t.Errorf("Status(not-added) = %+v, want not registered", st)
			}
		})
	}
}

// A failed run is retried with exponential backoff and its causes, without a new change; a
// success resets the backoff.
func TestFailedRunIsRetriedWithBackoff(t *testing.T) {
	cases := map[string]struct {
		opts   scheduler.Options
		script []bool // per run: fails
		delays []time.Duration
	}{
		"exponential, reset by success": {
			opts:   scheduler.Options{FailureBackoff: scheduler.Backoff{Base: time.Second, Max: time.Minute}},
			script: []bool{true, true, true, false, true, false},
			delays: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, time.Second},
		},
		"capped": {
			opts:   scheduler.Options{FailureBackoff: scheduler.Backoff{Base: 10 * time.Second, Max: 15 * time.Second}},
			script: []bool{true, true, true, false},
			delays: []time.Duration{10 * time.Second, 15 * time.Second, 15 * time.Second},
		},
		"custom workqueue rate limiter": {
			opts:   scheduler.Options{FailureRateLimiter: workqueue.NewTypedItemFastSlowRateLimiter[string](2*time.Second, 30*time.Second, 2)},
			script: []bool{true, true, true, false},
			delays: []time.Duration{2 * time.Second, 2 * time.Second, 30 * time.Second},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, tc.opts)
			var runs atomic.Int32
			h.start(func(_ context.Context, _ string, causes []scheduler.Cause) scheduler.Outcome {
				if i := int(runs.Add(1)) - 1; i < len(tc.script) && tc.script[i] {
					return scheduler.Outcome{Err: errors.New("apply failed")}
				}
				return scheduler.Outcome{Digest: "same"}
			}, "op")
			h.s.Notify("op", configMap("trigger-0")) // joins the initial run

			var delays []time.Duration
			var failures int
			var until time.Time
			var failedCauses []scheduler.Cause
			for i, fails := range tc.script {
				start := h.advanceUntil(time.Second/2, 5*time.Minute, match{scheduler.RunStarted, "op"})
				if start.Time.Before(until) {
					t.Errorf("run %d started at %s, before the backoff ended at %s", i+1, start.Time, until)
				}
				if failedCauses != nil {
					if diff := cmp.Diff(failedCauses, start.Causes); diff != "" {
						t.Errorf("retry %d causes (-failed run's +retry's):\n%s", i+1, diff)
					}
				}
				h.waitFor(match{scheduler.RunFinished, "op"})
				failedCauses = nil
				if fails {
					failures++
					b := h.waitFor(match{scheduler.BackoffScheduled, "op"})
					if b.Reason != scheduler.ReasonFailure {
						t.Errorf("backoff reason = %s, want %s", b.Reason, scheduler.ReasonFailure)
					}
					delays = append(delays, b.Delay)
					until = b.Until
					failedCauses = start.Causes
					if got := h.s.Status("op").Failures; got != failures {
						t.Errorf("after run %d: Failures = %d, want %d", i+1, got, failures)
					}
				} else {
					failures = 0
					if i+1 < len(tc.script) {
						h.s.Notify("op", configMap(fmt.Sprintf("trigger-%d", i+1)))
					}
				}
			}
			if diff := cmp.Diff(tc.delays, delays); diff != "" {
				t.Errorf("backoff delays (-want +got):\n%s", diff)
			}
			h.expectNone(time.Minute, time.Hour, match{scheduler.RunStarted, "op"})
			if got, want := h.metric("topolayer_scheduler_runs_total", "operator", "op", "result", "error"), float64(len(tc.delays)); got != want {
				t.Errorf("runs_total{result=error} = %v, want %v", got, want)
			}
			if got, want := h.metric("topolayer_scheduler_runs_total", "operator", "op", "result", "success"), float64(len(tc.script)-len(tc.delays)); got != want {
				t.Errorf("runs_total{result=success} = %v, want %v", got, want)
			}
		})
	}
}

// A panicking RunFunc fails its run (ErrRunPanicked) and is retried; the scheduler survives.
func TestPanicFailsTheRun(t *testing.T) {
	h := newHarness(t, scheduler.Options{})
	var runs atomic.Int32
	h.start(func(context.Context, string, []scheduler.Cause) scheduler.Outcome {
		if runs.Add(1) == 1 {
			panic("boom")
		}
		return scheduler.Outcome{}
	}, "op")
	if e := h.waitFor(match{scheduler.RunFinished, "op"}); !errors.Is(e.Outcome.Err, scheduler.ErrRunPanicked) {
		t.Fatalf("outcome error = %v, want ErrRunPanicked", e.Outcome.Err)
	}
	h.advanceUntil(100*time.Millisecond, time.Minute, match{scheduler.RunFinished, "op"})
}

// trigger is what a scripted run notifies its own operator of, for its next run.
type trigger int

const (
	noTrigger trigger = iota
	selfTrigger
	externalTrigger
)

// scriptedRun is one run of a scripted operator: the digest it returns and what it triggers.
type scriptedRun struct {
	digest string
	next   trigger
}

// scripted returns a RunFunc that plays script, one entry per run.
func scripted(h *harness, script []scriptedRun) scheduler.RunFunc {
	var n atomic.Int32
	return func(_ context.Context, op string, _ []scheduler.Cause) scheduler.Outcome {
		i := int(n.Add(1)) - 1
		if i >= len(script) {
			h.t.Errorf("unexpected run %d of %s", i+1, op)
			return scheduler.Outcome{Digest: "extra"}
		}
		switch script[i].next {
		case selfTrigger:
			h.s.Notify(op, scheduler.Cause{Cluster: "management", Group: "apps", Resource: "deployments", Namespace: "ns", Name: op, SelfInflicted: true})
		case externalTrigger:
			h.s.Notify(op, configMap(fmt.Sprintf("input-%d", i)))
		}
		return scheduler.Outcome{Digest: script[i].digest}
	}
}

// runScript runs the script to its end and returns each run's start and end.
func runScript(h *harness, op string, n int) (starts, ends []time.Time) {
	h.t.Helper()
	for range n {
		starts = append(starts, h.advanceUntil(500*time.Millisecond, 30*time.Minute, match{scheduler.RunStarted, op}).Time)
		ends = append(ends, h.waitFor(match{scheduler.RunFinished, op}).Time)
	}
	h.expectNone(time.Minute, time.Hour, match{scheduler.RunStarted, op})
	return starts, ends
}

func script(next trigger, digests ...string) []scriptedRun {
	out := make([]scriptedRun, len(digests))
	for i, d := range digests {
		out[i] = scriptedRun{digest: d, next: next}
	}
	out[len(out)-1].next = noTrigger
	return out
}

// An operator re-triggered only by its own changing outputs more than K times, or whose
// outputs oscillate, is reported once and damped; converging operators are not.
func TestHotLoopDetection(t *testing.T) {
	const (
		debounce = time.Second
		base     = 10 * time.Second
	)
	cases := map[string]struct {
		script     []scriptedRun
		detectedAt int64 // run that reveals the loop; 0: none
		reason     scheduler.Reason
	}{
		"self-triggered, changing digests": {
			script:     script(selfTrigger, "d1", "d2", "d3", "d4", "d5", "d6", "d7"),
			detectedAt: 5, // run 1 is the initial run; runs 2..5 are self-triggered, 4 > K=3
			reason:     scheduler.ReasonSelfTriggered,
		},
		"self-triggered, converging": {
			script: script(selfTrigger, "d", "d", "d", "d", "d", "d", "d", "d"),
		},
		"external triggers, changing digests": {
			script: script(externalTrigger, "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"),
		},
		"self-triggers broken by an external change": {
			script: []scriptedRun{
				{"d1", selfTrigger}, {"d2", selfTrigger}, {"d3", selfTrigger}, {"d4", externalTrigger},
				{"d5", selfTrigger}, {"d6", selfTrigger}, {"d7", selfTrigger}, {"d8", noTrigger},
			},
		},
		"oscillating A,B,A,B": {
			script:     script(selfTrigger, "A", "B", "A", "B", "A", "B"),
			detectedAt: 4,
			reason:     scheduler.ReasonOscillating,
		},
		"oscillating with period 3": {
			script:     script(selfTrigger, "A", "B", "C", "A", "B", "C"),
			detectedAt: 5,
			reason:     scheduler.ReasonOscillating,
		},
		"a user switching a setting back and forth": {
			script: script(externalTrigger, "A", "B", "A", "B", "A", "B"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, scheduler.Options{
				Debounce: debounce,
				HotLoop:  scheduler.HotLoopOptions{MaxSelfTriggers: 3, Backoff: scheduler.Backoff{Base: base, Max: time.Hour}},
			})
			h.start(scripted(h, tc.script), "op")
			starts, ends := runScript(h, "op", len(tc.script))

			detected := h.seen(match{scheduler.HotLoopDetected, "op"})
			switch {
			case tc.detectedAt == 0 && len(detected) != 0:
				t.Fatalf("hot loop detected: %+v", detected)
			case tc.detectedAt != 0 && len(detected) != 1:
				t.Fatalf("hot loop detected %d times, want once", len(detected))
			case tc.detectedAt != 0 && (detected[0].Run != tc.detectedAt || detected[0].Reason != tc.reason):
				t.Fatalf("hot loop detected at run %d (%s), want run %d (%s)", detected[0].Run, detected[0].Reason, tc.detectedAt, tc.reason)
			}
			for i := 1; i < len(starts); i++ {
				gap, run := starts[i].Sub(ends[i-1]), int64(i+1)
				damped := tc.detectedAt != 0 && run > tc.detectedAt
				if damped && gap < base {
					t.Errorf("run %d started %v after run %d, want damped by at least %v", run, gap, run-1, base)
				}
				if !damped && gap >= base {
					t.Errorf("run %d started %v after run %d, want not damped", run, gap, run-1)
				}
			}
			st := h.s.Status("op")
			if want := tc.detectedAt != 0; st.HotLoop.Active != want || st.HotLoop.Reason != tc.reason {
				t.Errorf("Status().HotLoop = %+v, want active %v reason %q", st.HotLoop, want, tc.reason)
			}
			if got, want := h.metric("topolayer_scheduler_hot_loops_total", "operator", "op"), float64(len(detected)); got != want {
				t.Errorf("hot_loops_total = %v, want %v", got, want)
			}
		})
	}
}

// Damping grows exponentially while the loop lasts, ends with a converged run, and starts
// again from the base for a new episode, which is reported again.
func TestHotLoopDampingGrowsAndResets(t *testing.T) {
	h := newHarness(t, scheduler.Options{
		Debounce: time.Second,
		HotLoop:  scheduler.HotLoopOptions{MaxSelfTriggers: 1, Backoff: scheduler.Backoff{Base: 10 * time.Second, Max: time.Minute}},
	})
	plan := script(selfTrigger,
		"d1", "d2", // run 2: 1 self-triggered change
		"d3", "d4", "d5", "d6", // run 3 detects (2 > K=1); damped 10s, 20s, 40s, 60s (capped)
		"d6",       // run 7 converges: no damping
		"d7", "d8", // run 9 detects a second episode; damped 10s again
	)
	h.start(scripted(h, plan), "op")
	starts, ends := runScript(h, "op", len(plan))

	var delays []time.Duration
	for _, b := range h.seen(match{scheduler.BackoffScheduled, "op"}) {
		if b.Reason != scheduler.ReasonHotLoop {
			t.Errorf("backoff reason = %s, want %s", b.Reason, scheduler.ReasonHotLoop)
		}
		delays = append(delays, b.Delay)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, 10 * time.Second}
	if diff := cmp.Diff(want, delays); diff != "" {
		t.Errorf("damping delays (-want +got):\n%s", diff)
	}
	var detectedAt []int64
	for _, e := range h.seen(match{scheduler.HotLoopDetected, "op"}) {
		detectedAt = append(detectedAt, e.Run)
	}
	if diff := cmp.Diff([]int64{3, 9}, detectedAt); diff != "" {
		t.Errorf("HotLoopDetected runs (-want +got):\n%s", diff)
	}
	for i, wantGap := range map[int]time.Duration{3: 10 * time.Second, 6: time.Minute} { // run index i+1
		if gap := starts[i].Sub(ends[i-1]); gap < wantGap {
			t.Errorf("run %d started %v after run %d, want at least %v", i+1, gap, i, wantGap)
		}
	}
	if gap := starts[7].Sub(ends[6]); gap >= 10*time.Second {
		t.Errorf("run 8 started %v after the converged run 7, want no damping", gap)
	}
	if st := h.s.Status("op").HotLoop; !st.Active || st.Episodes != 2 {
		t.Errorf("Status().HotLoop = %+v, want active, 2 episodes", st)
	}
}

// When Start's context is done, running runs finish (with their context cancelled), no new
// run starts, and Start returns only after them.
func TestGracefulShutdown(t *testing.T) {
	h := newHarness(t, scheduler.Options{MaxConcurrent: 2})
	release := make(chan struct{})
	var releaseOnce sync.Once
	var cancelled atomic.Int32
	h.start(func(ctx context.Context, _ string, _ []scheduler.Cause) scheduler.Outcome {
		<-release
		if ctx.Err() != nil {
			cancelled.Add(1)
		}
		return scheduler.Outcome{}
	}, "a", "b", "c")
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	running := []string{h.waitFor(match{scheduler.RunStarted, ""}).Operator, h.waitFor(match{scheduler.RunStarted, ""}).Operator}

	h.cancel()
	select {
	case err := <-h.stopped:
		t.Fatalf("Start returned (%v) while runs were in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	h.s.Notify(running[0], configMap("late"))
	releaseOnce.Do(func() { close(release) })
	if err := h.stop(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got := countFinished(h); got != 2 {
		t.Errorf("%d runs finished, want the 2 in flight", got)
	}
	if e, ok := h.poll(match{scheduler.RunStarted, ""}, 20*time.Millisecond); ok {
		t.Errorf("%s started after shutdown", e.Operator)
	}
	if got := cancelled.Load(); got != 2 {
		t.Errorf("%d runs saw their context cancelled, want 2", got)
	}
	if err := h.s.Start(context.Background()); !errors.Is(err, scheduler.ErrAlreadyStarted) {
		t.Errorf("second Start = %v, want ErrAlreadyStarted", err)
	}
}

// countFinished counts the RunFinished events not yet matched.
func countFinished(h *harness) int {
	n := 0
	for {
		if _, ok := h.poll(match{scheduler.RunFinished, ""}, 20*time.Millisecond); !ok {
			return n
		}
		n++
	}
}

// Status reports a run in progress, the causes waiting for the next run, and when it is due.
func TestStatus(t *testing.T) {
	const debounce = 5 * time.Second
	h := newHarness(t, scheduler.Options{Debounce: debounce})
	release := make(chan struct{})
	var releaseOnce sync.Once
	h.start(func(context.Context, string, []scheduler.Cause) scheduler.Outcome {
		<-release
		return scheduler.Outcome{Mutations: 3, Digest: "x"}
	}, "op")
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	start := h.waitFor(match{scheduler.RunStarted, "op"}).Time

	h.s.Notify("op", configMap("a"))
	h.s.Notify("op", configMap("a"))
	st := h.s.Status("op")
	if !st.Registered || !st.Running || st.Runs != 1 || !st.Scheduled || !st.LastStart.Equal(start) {
		t.Errorf("during the run: %+v", st)
	}
	if diff := cmp.Diff([]scheduler.Cause{configMap("a")}, st.Pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}

	releaseOnce.Do(func() { close(release) })
	end := h.waitFor(match{scheduler.RunFinished, "op"}).Time
	st = h.s.Status("op")
	if st.Running || !st.LastEnd.Equal(end) || st.LastOutcome != (scheduler.Outcome{Mutations: 3, Digest: "x"}) {
		t.Errorf("after the run: %+v", st)
	}
	if want := start.Add(debounce); !st.NextRun.Equal(want) {
		t.Errorf("NextRun = %s, want %s (debounce from the change)", st.NextRun, want)
	}
}

// Many goroutines notifying several operators at once (real clock, for the race detector):
// every cause reaches exactly one run of its operator and no operator runs twice at once.
func TestConcurrentNotify(t *testing.T) {
	operators := []string{"a", "b", "c"}
	var mu sync.Mutex
	got := map[string]map[string]int{}
	inFlight := map[string]*atomic.Int32{}
	for _, op := range operators {
		got[op] = map[string]int{}
		inFlight[op] = &atomic.Int32{}
	}
	s, err := scheduler.New(scheduler.Options{Debounce: time.Millisecond, MaxConcurrent: 2}, func(_ context.Context, op string, causes []scheduler.Cause) scheduler.Outcome {
		if inFlight[op].Add(1) > 1 {
			t.Errorf("two runs of %s at once", op)
		}
		defer inFlight[op].Add(-1)
		mu.Lock()
		defer mu.Unlock()
		for _, c := range causes {
			got[op][c.Name]++
		}
		return scheduler.Outcome{Digest: "same"}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range operators {
		s.Add(op)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	}()

	const goroutines, each = 6, 100
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				s.Notify(operators[(g+i)%len(operators)], configMap(fmt.Sprintf("g%d-%d", g, i)))
			}
		})
	}
	wg.Wait()

	err = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, causes := range got {
			n += len(causes)
		}
		return n == goroutines*each, nil
	})
	if err != nil {
		t.Fatalf("not every cause was delivered: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for g := range goroutines {
		for i := range each {
			op, name := operators[(g+i)%len(operators)], fmt.Sprintf("g%d-%d", g, i)
			if got[op][name] != 1 {
				t.Errorf("cause %s of %s delivered %d times, want once", name, op, got[op][name])
			}
		}
	}
}

// An operator with a resync period runs again that long after its last run ended when
// nothing it reads changed, with ResyncCause alone; a change runs it with the change and
// restarts the period; without a period an idle operator never runs.
func TestResync(t *testing.T) {
	const period = time.Minute
	cases := map[string]struct {
		resync      time.Duration
		changeAfter time.Duration // a change notified this long after the first run; 0: none
		want        []time.Duration
		wantCauses  [][]scheduler.Cause
	}{
		"idle: every period, the resync cause alone": {
			resync:     period,
			want:       []time.Duration{period, 2 * period, 3 * period},
			wantCauses: [][]scheduler.Cause{{scheduler.ResyncCause}, {scheduler.ResyncCause}, {scheduler.ResyncCause}},
		},
		"a change runs it at once and restarts the period": {
			resync:      period,
			changeAfter: period / 2,
			want:        []time.Duration{period / 2, period/2 + period},
			wantCauses:  [][]scheduler.Cause{{configMap("changed")}, {scheduler.ResyncCause}},
		},
		"off: an idle operator never runs": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, scheduler.Options{})
			h.start(succeed)
			h.s.AddOperator("op", scheduler.OperatorOptions{Resync: tc.resync})
			first := h.waitFor(match{scheduler.RunFinished, "op"}).Time
			if tc.changeAfter > 0 {
				h.clock.Step(tc.changeAfter)
				h.s.Notify("op", configMap("changed"))
			}
			for i, at := range tc.want {
				start := h.advanceUntil(time.Second, 2*period, match{scheduler.RunStarted, "op"})
				if got := start.Time.Sub(first); got < at || got > at+time.Second {
					t.Errorf("run %d started %v after the first ended, want %v", start.Run, got, at)
				}
				if !slices.Equal(start.Causes, tc.wantCauses[i]) {
					t.Errorf("run %d causes = %v, want %v", start.Run, start.Causes, tc.wantCauses[i])
				}
			}
			if len(tc.want) == 0 {
				h.expectNone(10*time.Second, 10*period, match{scheduler.RunStarted, "op"})
			}
			if st := h.s.Status("op"); st.Resync != tc.resync || (tc.resync > 0) == st.NextResync.IsZero() {
				t.Errorf("status resync %v next %v, want period %v", st.Resync, st.NextResync, tc.resync)
			}
		})
	}
}
