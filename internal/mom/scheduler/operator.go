package scheduler

import (
	"math"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// operatorState is the scheduling state of one registered operator. It is guarded by
// Scheduler.mu.
type operatorState struct {
	name string

	pending []Cause            // causes for the next run, in first-notified order
	seen    map[Cause]struct{} // the set of pending, for deduplication
	want    bool               // a run is wanted even without causes (initial run, retry)
	due     time.Time          // when the pending batch is due as far as debounce is concerned

	running            bool
	runs               int64
	failures           int
	lastStart, lastEnd time.Time
	last               Outcome

	backoffUntil  time.Time     // failure backoff
	dampUntil     time.Time     // hot-loop damping
	budget        *rate.Limiter // nil: unlimited
	budgetWaiting bool          // BudgetExhausted already reported for the current wait
	hot           hotLoop

	resync   time.Duration // OperatorOptions.Resync; zero: off
	resyncAt time.Time     // when the next resync run is due; zero: none
}

// resyncDue reports whether a resync run is due at now, and if so adds its cause.
func (o *operatorState) resyncDue(now time.Time) bool {
	if o.resyncAt.IsZero() || now.Before(o.resyncAt) {
		return false
	}
	o.add(ResyncCause)
	o.due = now
	return true
}

// hasWork reports whether a next run is wanted.
func (o *operatorState) hasWork() bool { return o.want || len(o.pending) > 0 }

// add records a cause for the next run, once.
func (o *operatorState) add(c Cause) {
	if _, ok := o.seen[c]; ok {
		return
	}
	if o.seen == nil {
		o.seen = map[Cause]struct{}{}
	}
	o.seen[c] = struct{}{}
	o.pending = append(o.pending, c)
}

// take hands the pending batch to a run and clears it.
func (o *operatorState) take() []Cause {
	causes := o.pending
	o.pending, o.seen, o.want, o.due = nil, nil, false, time.Time{}
	return causes
}

// retry puts a failed run's causes back in front of the pending ones and asks for a run
// that is due at once (backoff decides when).
func (o *operatorState) retry(causes []Cause, now time.Time) {
	newer := o.pending
	o.pending, o.seen = nil, nil
	for _, c := range slices.Concat(causes, newer) {
		o.add(c)
	}
	if len(newer) == 0 || o.due.After(now) {
		o.due = now
	}
	o.want = true
}

// readyAt is the earliest time the next run may start, and whether the mutation budget is
// what holds it back.
func (o *operatorState) readyAt(now time.Time, cooldown time.Duration) (at time.Time, budgetBound bool) {
	at = o.due
	if !o.lastEnd.IsZero() {
		at = later(at, o.lastEnd.Add(cooldown))
	}
	at = later(at, o.backoffUntil)
	at = later(at, o.dampUntil)
	if o.budget != nil {
		if b := budgetReadyAt(o.budget, now); b.After(at) && b.After(now) {
			at, budgetBound = b, true
		}
	}
	return at, budgetBound
}

// charge takes a run's mutations from the budget at time t. The bucket may go into debt:
// mutations beyond the burst are reserved in burst-sized pieces.
func (o *operatorState) charge(t time.Time, mutations int) {
	if o.budget == nil {
		return
	}
	for n := mutations; n > 0; {
		k := min(n, o.budget.Burst())
		o.budget.ReserveN(t, k) // always ok: k <= burst, no limit on the wait
		n -= k
	}
}

// budgetEpsilon absorbs floating-point error when the bucket is almost at one token.
const budgetEpsilon = 1e-9

// budgetReadyAt is when the limiter holds at least one token again (now if it does).
func budgetReadyAt(l *rate.Limiter, now time.Time) time.Time {
	need := 1 - l.TokensAt(now)
	if need <= budgetEpsilon {
		return now
	}
	secs := need / float64(l.Limit())
	return now.Add(time.Duration(math.Ceil(secs * float64(time.Second))))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
