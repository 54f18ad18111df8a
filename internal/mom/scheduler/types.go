package scheduler

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Options configures a Scheduler. The zero value of every field means its default.
type Options struct {
	// Debounce (D) is how long a burst of changes is collected: an operator runs D after the
	// first change of a burst, once, with every change that arrived inside the window. Zero
	// runs on the first change without waiting.
	Debounce time.Duration

	// Cooldown (M) is the least time between the end of one run of an operator and the start
	// of its next run, whatever triggered it. Zero means no cooldown.
	Cooldown time.Duration

	// MutationsPerMinute (N) is each operator's budget of applied mutations per minute: a
	// token bucket of N tokens refilled at N per minute. The mutations a run applied are
	// taken from it when the run ends, and may leave it in debt; the operator's next run waits
	// until the budget holds at least one mutation again. Zero means unlimited.
	MutationsPerMinute int

	// MaxConcurrent (X) is the most operators running at once, across the scheduler. Zero
	// means 1.
	MaxConcurrent int

	// FailureBackoff is the exponential backoff before a failed run is retried (per
	// operator, reset by a successful run). Zero fields mean Base 1s and Max 5m. Ignored when
	// FailureRateLimiter is set.
	FailureBackoff Backoff

	// FailureRateLimiter, if set, decides the delay before a failed run is retried. It is
	// keyed by operator name; Forget is called after a successful run.
	FailureRateLimiter workqueue.TypedRateLimiter[string]

	// HotLoop configures the detection and damping of operators that re-trigger themselves
	// without converging.
	HotLoop HotLoopOptions

	// Clock is the source of time for debounce, cooldown, budgets and backoff. Nil means the
	// real clock; tests pass a k8s.io/utils/clock/testing.FakeClock.
	Clock clock.WithTicker

	// Registerer, if set, receives the scheduler's Prometheus metrics (see the package
	// documentation). New fails if they are already registered.
	Registerer prometheus.Registerer

	// Observer, if set, is called with every Event. It is called from the scheduler's
	// goroutines, possibly concurrently for different operators but in order for one
	// operator, and must return quickly. It may call Status and Notify.
	Observer func(Event)
}

// Backoff is an exponential backoff: Base after the first occurrence, doubling with each
// further occurrence in a row, never more than Max.
type Backoff struct {
	// Base is the first delay.
	Base time.Duration
	// Max caps the delay.
	Max time.Duration
}

// HotLoopOptions configures hot-loop detection. An operator is in a hot loop when either
//   - it is re-triggered only by its own outputs (every cause SelfInflicted) more than
//     MaxSelfTriggers times in a row, each run producing a new output digest, or
//   - its output digests oscillate under its own writes: a self-triggered run returns to a
//     digest seen in the recent runs (but not the previous one, A,B,A) Oscillations times in
//     a row (A,B,A,B for the default 2). A run that someone else's change caused does not
//     count: a user switching a setting back and forth is not a loop.
//
// A run whose digest equals the previous run's, or that is neither self-triggered nor
// oscillating, has converged and ends the hot loop. Failed runs do not count.
type HotLoopOptions struct {
	// MaxSelfTriggers (K) is how many self-triggered, non-converging runs in a row are
	// tolerated. Zero means 5; negative disables this check.
	MaxSelfTriggers int

	// Oscillations is how many returns to an earlier digest in a row make an oscillation.
	// Zero means 2 (A,B,A,B); negative disables this check.
	Oscillations int

	// Backoff delays each run after a hot loop is detected, exponentially, until a run
	// converges. Zero fields mean Base 10s and Max 10m. Ignored when RateLimiter is set.
	Backoff Backoff

	// RateLimiter, if set, decides the damping delay instead of Backoff. It is keyed by
	// operator name; Forget is called when the operator converges.
	RateLimiter workqueue.TypedRateLimiter[string]
}

// Cause is one change an operator reads: the object that changed.
type Cause struct {
	// Cluster names the cluster (or target) the object lives in.
	Cluster string
	// Group is the object's API group, empty for the core group.
	Group string
	// Resource is the object's resource, lower-case plural ("configmaps").
	Resource string
	// Namespace is the object's namespace, empty for cluster-scoped objects.
	Namespace string
	// Name is the object's name.
	Name string
	// SelfInflicted says that the manager knows this change was written by this operator's own
	// last apply. Runs triggered only by such changes count towards hot-loop detection.
	SelfInflicted bool
	// Resync marks the cause of a periodic run on unchanged inputs (OperatorOptions.Resync);
	// its other fields are empty. ResyncCause is the one such cause.
	Resync bool
}

// ResyncCause is the cause of a run that the operator's resync period started: nothing it
// reads changed.
var ResyncCause = Cause{Resync: true}

// OperatorOptions configures one operator of a Scheduler (AddOperator). The zero value
// means the defaults.
type OperatorOptions struct {
	// Resync is how long after the end of its last run an operator runs again when nothing
	// it reads changed, with ResyncCause, as a resident operator's informers resync. Every
	// other rule (cooldown, budget, backoff, damping) applies to these runs. Zero means never.
	Resync time.Duration
}

// Outcome is what a run did.
type Outcome struct {
	// Mutations is how many mutations the run applied; it is charged to the operator's
	// budget (Options.MutationsPerMinute).
	Mutations int
	// Digest summarises the run's outputs; equal digests mean equal outputs. Hot-loop
	// detection compares the digests of consecutive runs.
	Digest string
	// Err is non-nil if the run failed; a failed run is retried with backoff, with its
	// causes, without waiting for a new change.
	Err error
}

// RunFunc runs one operator once with the changes that triggered it (deduplicated, in the
// order they were first notified; empty for the initial run). ctx is cancelled when the
// scheduler stops and carries a logr logger named for the run.
type RunFunc func(ctx context.Context, operator string, causes []Cause) Outcome

// EventType names what an Event reports.
type EventType string

const (
	// RunStarted reports that a run began; Event.Causes holds its causes.
	RunStarted EventType = "RunStarted"
	// RunFinished reports that a run ended; Event.Outcome and Event.Duration say how.
	RunFinished EventType = "RunFinished"
	// HotLoopDetected reports, once per episode, that an operator entered a hot loop;
	// Event.Reason says which kind.
	HotLoopDetected EventType = "HotLoopDetected"
	// BudgetExhausted reports, once per wait, that a run is held back by the operator's
	// mutation budget; Event.Until is when the budget allows it.
	BudgetExhausted EventType = "BudgetExhausted"
	// BackoffScheduled reports that the operator's next run is delayed after a failure or
	// during a hot loop; Event.Reason says which, Event.Delay and Event.Until by how much.
	BackoffScheduled EventType = "BackoffScheduled"
)

// Reason qualifies a HotLoopDetected or BackoffScheduled event.
type Reason string

const (
	// ReasonSelfTriggered: the operator kept re-triggering itself with changing outputs.
	ReasonSelfTriggered Reason = "SelfTriggered"
	// ReasonOscillating: the operator's outputs keep returning to earlier states.
	ReasonOscillating Reason = "Oscillating"
	// ReasonFailure: a backoff after a failed run.
	ReasonFailure Reason = "Failure"
	// ReasonHotLoop: a damping backoff during a hot loop.
	ReasonHotLoop Reason = "HotLoop"
)

// Event is one scheduling decision or run, reported to Options.Observer.
type Event struct {
	// Type says what happened.
	Type EventType
	// Operator is the operator concerned.
	Operator string
	// Time is the scheduler's clock when it happened.
	Time time.Time
	// Run is the operator's run count at the time: for RunStarted and RunFinished the number
	// of that run, counting from 1.
	Run int64
	// Causes are the run's causes (RunStarted).
	Causes []Cause
	// Outcome is the run's outcome (RunFinished).
	Outcome Outcome
	// Duration is how long the run took (RunFinished).
	Duration time.Duration
	// Reason qualifies HotLoopDetected and BackoffScheduled.
	Reason Reason
	// Delay is the backoff (BackoffScheduled).
	Delay time.Duration
	// Until is the earliest time the next run may start as far as this event's cause is
	// concerned (BackoffScheduled, BudgetExhausted).
	Until time.Time
}

// OperatorStatus is a snapshot of one operator's scheduling state.
type OperatorStatus struct {
	// Operator is the operator's name.
	Operator string
	// Registered is false for an operator never passed to Add; the other fields are then zero.
	Registered bool
	// Running is true while a run is in progress.
	Running bool
	// Runs counts the runs started.
	Runs int64
	// Failures counts the failed runs since the last successful one.
	Failures int
	// LastStart and LastEnd are when the last run started and ended (zero before the first).
	LastStart, LastEnd time.Time
	// LastOutcome is the last finished run's outcome.
	LastOutcome Outcome
	// Pending are the causes waiting for the next run.
	Pending []Cause
	// Scheduled is true when a next run is wanted (pending causes, the initial run or a retry).
	Scheduled bool
	// NextRun is the earliest time the next run may start when Scheduled and not Running.
	NextRun time.Time
	// HotLoop is the hot-loop detector's state.
	HotLoop HotLoopStatus
	// Resync is the operator's resync period (OperatorOptions.Resync); zero when off.
	Resync time.Duration
	// NextResync is when the operator runs again with ResyncCause if nothing else makes
	// it run before (zero when Resync is off or before its first run ends).
	NextResync time.Time
}

// HotLoopStatus is the hot-loop detector's state for one operator.
type HotLoopStatus struct {
	// Active is true while the operator is considered in a hot loop and damped.
	Active bool
	// Reason is why it is in a hot loop, when Active.
	Reason Reason
	// SelfTriggered counts the self-triggered, non-converging runs in a row.
	SelfTriggered int
	// Oscillations counts the returns to an earlier digest in a row.
	Oscillations int
	// Episodes counts the hot loops detected so far.
	Episodes int
	// DampedUntil is when the current damping backoff ends (zero when not damped).
	DampedUntil time.Time
}
