package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// ErrAlreadyStarted is returned by Start when the scheduler was started before; a Scheduler
// runs once.
var ErrAlreadyStarted = errors.New("scheduler already started")

// ErrRunPanicked matches the error of a run whose RunFunc panicked; the panic is recovered
// and the run counts as failed.
var ErrRunPanicked = errors.New("run panicked")

const (
	defaultFailureBase     = time.Second
	defaultFailureMax      = 5 * time.Minute
	defaultHotLoopBase     = 10 * time.Second
	defaultHotLoopMax      = 10 * time.Minute
	defaultMaxSelfTriggers = 5
	defaultOscillations    = 2
)

// Scheduler decides when each registered operator runs; see the package documentation.
// Its methods are safe for concurrent use.
type Scheduler struct {
	opts    Options // defaulted
	run     RunFunc
	clock   clock.WithTicker
	metrics *metrics
	failure workqueue.TypedRateLimiter[string]
	damping workqueue.TypedRateLimiter[string]

	mu      sync.Mutex
	ops     map[string]*operatorState
	queue   workqueue.TypedDelayingInterface[string] // nil until Start
	started bool
	log     logr.Logger
}

// New returns a Scheduler that runs operators with run. It validates opts and registers the
// metrics with opts.Registerer.
func New(opts Options, run RunFunc) (*Scheduler, error) {
	if err := opts.validate(run); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{
		opts:    opts,
		run:     run,
		clock:   opts.Clock,
		metrics: m,
		failure: opts.FailureRateLimiter,
		damping: opts.HotLoop.RateLimiter,
		ops:     map[string]*operatorState{},
		log:     logr.Discard(),
	}
	if s.failure == nil {
		s.failure = workqueue.NewTypedItemExponentialFailureRateLimiter[string](opts.FailureBackoff.Base, opts.FailureBackoff.Max)
	}
	if s.damping == nil {
		s.damping = workqueue.NewTypedItemExponentialFailureRateLimiter[string](opts.HotLoop.Backoff.Base, opts.HotLoop.Backoff.Max)
	}
	return s, nil
}

func (o Options) validate(run RunFunc) error {
	var errs []error
	nonNegative := func(p *field.Path, d time.Duration) {
		if d < 0 {
			errs = append(errs, field.Invalid(p, d.String(), "must not be negative"))
		}
	}
	backoff := func(p *field.Path, b Backoff) {
		nonNegative(p.Child("base"), b.Base)
		nonNegative(p.Child("max"), b.Max)
		if b.Base > 0 && b.Max > 0 && b.Max < b.Base {
			errs = append(errs, field.Invalid(p.Child("max"), b.Max.String(), "must not be less than base"))
		}
	}
	nonNegative(field.NewPath("debounce"), o.Debounce)
	nonNegative(field.NewPath("cooldown"), o.Cooldown)
	if o.MutationsPerMinute < 0 {
		errs = append(errs, field.Invalid(field.NewPath("mutationsPerMinute"), o.MutationsPerMinute, "must not be negative"))
	}
	if o.MaxConcurrent < 0 {
		errs = append(errs, field.Invalid(field.NewPath("maxConcurrent"), o.MaxConcurrent, "must not be negative"))
	}
	backoff(field.NewPath("failureBackoff"), o.FailureBackoff)
	backoff(field.NewPath("hotLoop", "backoff"), o.HotLoop.Backoff)
	if run == nil {
		errs = append(errs, errors.New("run: must not be nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("scheduler options: %w", err)
	}
	return nil
}

// withDefaults returns a copy of o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.MaxConcurrent == 0 {
		o.MaxConcurrent = 1
	}
	if o.FailureBackoff.Base == 0 {
		o.FailureBackoff.Base = defaultFailureBase
	}
	if o.FailureBackoff.Max == 0 {
		o.FailureBackoff.Max = max(defaultFailureMax, o.FailureBackoff.Base)
	}
	if o.HotLoop.Backoff.Base == 0 {
		o.HotLoop.Backoff.Base = defaultHotLoopBase
	}
	if o.HotLoop.Backoff.Max == 0 {
		o.HotLoop.Backoff.Max = max(defaultHotLoopMax, o.HotLoop.Backoff.Base)
	}
	if o.HotLoop.MaxSelfTriggers == 0 {
		o.HotLoop.MaxSelfTriggers = defaultMaxSelfTriggers
	}
	if o.HotLoop.Oscillations == 0 {
		o.HotLoop.Oscillations = defaultOscillations
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

// Add registers an operator with the default OperatorOptions; see AddOperator.
func (s *Scheduler) Add(operator string) { s.AddOperator(operator, OperatorOptions{}) }

// AddOperator registers an operator and schedules one initial run, due at once (changes
// notified before it starts join it). Adding a registered operator again does nothing.
// Operators may be added before or after Start. A negative resync period counts as zero.
func (s *Scheduler) AddOperator(operator string, opts OperatorOptions) {
	s.mu.Lock()
	if _, ok := s.ops[operator]; ok {
		s.mu.Unlock()
		return
	}
	o := &operatorState{name: operator, want: true, due: s.clock.Now(), resync: max(opts.Resync, 0)}
	if n := s.opts.MutationsPerMinute; n > 0 {
		o.budget = rate.NewLimiter(rate.Limit(float64(n)/time.Minute.Seconds()), n)
	}
	s.ops[operator] = o
	s.updateGaugesLocked()
	q := s.queue
	s.mu.Unlock()
	if q != nil {
		q.Add(operator)
	}
}

// Notify records a change read by an operator. The first change of a burst makes the
// operator due Debounce later; later changes join the pending batch (deduplicated). A change
// that arrives while the operator runs is kept for its next run. Changes for an operator that
// was never added are dropped. Notify never blocks on a run and is safe from any goroutine.
func (s *Scheduler) Notify(operator string, c Cause) {
	s.mu.Lock()
	o, ok := s.ops[operator]
	if !ok {
		s.mu.Unlock()
		return
	}
	s.metrics.changes.WithLabelValues(operator).Inc()
	startsBurst := !o.hasWork()
	if startsBurst {
		o.due = s.clock.Now().Add(s.opts.Debounce)
	} else {
		s.metrics.debounced.WithLabelValues(operator).Inc()
	}
	o.add(c)
	s.updateGaugesLocked()
	q := s.queue
	s.mu.Unlock()
	if q != nil && startsBurst {
		q.AddAfter(operator, s.opts.Debounce)
	}
}

// Start runs the scheduler until ctx is done: MaxConcurrent workers take due operators from
// a client-go delaying queue and run them. When ctx is done, no new run starts, running runs
// see their context cancelled, and Start returns nil once they have all returned. A Scheduler
// starts once; Start matches controller-runtime's manager.Runnable.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return ErrAlreadyStarted
	}
	s.started = true
	s.log = logr.FromContextOrDiscard(ctx).WithName("scheduler")
	q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Clock: s.clock})
	s.queue = q
	var due []string
	for name, o := range s.ops {
		if o.hasWork() {
			due = append(due, name)
		}
	}
	s.mu.Unlock()
	slices.Sort(due) // a deterministic first order
	for _, name := range due {
		q.Add(name)
	}

	var wg sync.WaitGroup
	for range s.opts.MaxConcurrent {
		wg.Go(func() {
			for {
				name, shutdown := q.Get()
				if shutdown {
					return
				}
				s.process(ctx, q, name)
				q.Done(name)
			}
		})
	}
	<-ctx.Done()
	s.log.V(1).Info("stopping, waiting for running operators")
	q.ShutDown()
	wg.Wait()
	return nil
}

// Status returns a snapshot of an operator's scheduling state.
func (s *Scheduler) Status(operator string) OperatorStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.ops[operator]
	if !ok {
		return OperatorStatus{Operator: operator}
	}
	st := OperatorStatus{
		Operator:    operator,
		Registered:  true,
		Running:     o.running,
		Runs:        o.runs,
		Failures:    o.failures,
		LastStart:   o.lastStart,
		LastEnd:     o.lastEnd,
		LastOutcome: o.last,
		Pending:     slices.Clone(o.pending),
		Scheduled:   o.hasWork(),
		Resync:      o.resync,
		NextResync:  o.resyncAt,
		HotLoop: HotLoopStatus{
			Active:        o.hot.active,
			Reason:        o.hot.reason,
			SelfTriggered: o.hot.selfStreak,
			Oscillations:  o.hot.revisits,
			Episodes:      o.hot.episodes,
			DampedUntil:   o.dampUntil,
		},
	}
	if st.Scheduled && !st.Running {
		st.NextRun, _ = o.readyAt(s.clock.Now(), s.opts.Cooldown)
	}
	return st
}

// process is one worker's turn with an operator taken from the queue: run it if it is due,
// or put it back for when it will be. The queue never hands one operator to two workers.
func (s *Scheduler) process(ctx context.Context, q workqueue.TypedDelayingInterface[string], name string) {
	s.mu.Lock()
	o, ok := s.ops[name]
	if !ok || o.running || ctx.Err() != nil {
		s.mu.Unlock()
		return
	}
	now := s.clock.Now()
	if !o.hasWork() && !o.resyncDue(now) {
		// Woken for a resync that a later run moved: wait for the new time.
		var wait time.Duration
		if !o.resyncAt.IsZero() {
			wait = o.resyncAt.Sub(now)
		}
		s.mu.Unlock()
		if wait > 0 {
			q.AddAfter(name, wait)
		}
		return
	}
	if at, budgetBound := o.readyAt(now, s.opts.Cooldown); at.After(now) {
		var events []Event
		if budgetBound && !o.budgetWaiting {
			o.budgetWaiting = true
			s.metrics.budgetWaits.WithLabelValues(name).Inc()
			events = append(events, Event{Type: BudgetExhausted, Operator: name, Time: now, Run: o.runs, Until: at})
		}
		s.mu.Unlock()
		s.emit(events...)
		q.AddAfter(name, at.Sub(now))
		return
	}
	causes := o.take()
	o.running = true
	o.runs++
	o.lastStart = now
	o.budgetWaiting = false
	run := o.runs
	s.updateGaugesLocked()
	log := s.log.WithValues("operator", name, "run", run)
	s.mu.Unlock()

	s.emit(Event{Type: RunStarted, Operator: name, Time: now, Run: run, Causes: slices.Clone(causes)})
	log.V(1).Info("run started", "causes", len(causes))
	out := s.call(logr.NewContext(ctx, log), name, run, causes)
	end := s.clock.Now()
	if out.Err != nil {
		log.Error(out.Err, "run failed")
	} else {
		log.V(1).Info("run finished", "mutations", out.Mutations)
	}
	if s.finish(log, o, run, causes, out, now, end) {
		q.Add(name) // marked dirty while processing: the queue hands it out again after Done
	}
}

// call runs the operator, turning a panic into a failed outcome.
func (s *Scheduler) call(ctx context.Context, name string, run int64, causes []Cause) (out Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = Outcome{Err: fmt.Errorf("operator %s run %d: %w: %v", name, run, ErrRunPanicked, r)}
		}
	}()
	return s.run(ctx, name, slices.Clone(causes))
}

// finish records a run's outcome, decides backoff and damping, and reports whether the
// operator wants another run.
func (s *Scheduler) finish(log logr.Logger, o *operatorState, run int64, causes []Cause, out Outcome, start, end time.Time) (again bool) {
	s.mu.Lock()
	name := o.name
	o.running = false
	o.lastEnd = end
	o.last = out
	o.charge(end, out.Mutations)
	result := "success"
	if out.Err != nil {
		result = "error"
	}
	s.metrics.runs.WithLabelValues(name, result).Inc()
	s.metrics.duration.WithLabelValues(name).Observe(end.Sub(start).Seconds())
	events := []Event{{Type: RunFinished, Operator: name, Time: end, Run: run, Outcome: out, Duration: end.Sub(start)}}

	if out.Err != nil {
		o.failures++
		delay := s.failure.When(name)
		o.backoffUntil = end.Add(delay)
		o.retry(causes, end)
		events = append(events, Event{Type: BackoffScheduled, Operator: name, Time: end, Run: run, Reason: ReasonFailure, Delay: delay, Until: o.backoffUntil})
	} else {
		o.failures = 0
		o.backoffUntil = time.Time{}
		s.failure.Forget(name)
		if o.hot.observe(selfOnly(causes), out.Digest, s.opts.HotLoop.MaxSelfTriggers, s.opts.HotLoop.Oscillations) {
			s.metrics.hotLoops.WithLabelValues(name).Inc()
			events = append(events, Event{Type: HotLoopDetected, Operator: name, Time: end, Run: run, Reason: o.hot.reason})
			log.Info("hot loop detected, damping", "reason", o.hot.reason)
		}
		if o.hot.active {
			delay := s.damping.When(name)
			o.dampUntil = end.Add(delay)
			events = append(events, Event{Type: BackoffScheduled, Operator: name, Time: end, Run: run, Reason: ReasonHotLoop, Delay: delay, Until: o.dampUntil})
		} else {
			o.dampUntil = time.Time{}
			s.damping.Forget(name)
		}
	}
	again = o.hasWork()
	var resyncIn time.Duration
	if o.resync > 0 {
		o.resyncAt, resyncIn = end.Add(o.resync), o.resync
	}
	s.updateGaugesLocked()
	s.mu.Unlock()
	s.emit(events...)
	if resyncIn > 0 && !again {
		s.wake(name, resyncIn)
	}
	return again
}

// wake puts an operator back in the queue after d, once the scheduler has started.
func (s *Scheduler) wake(name string, d time.Duration) {
	s.mu.Lock()
	q := s.queue
	s.mu.Unlock()
	if q != nil {
		q.AddAfter(name, d)
	}
}

// updateGaugesLocked refreshes the queue-depth and running gauges. s.mu must be held.
func (s *Scheduler) updateGaugesLocked() {
	var waiting, running int
	for _, o := range s.ops {
		switch {
		case o.running:
			running++
		case o.hasWork():
			waiting++
		}
	}
	s.metrics.queueDepth.Set(float64(waiting))
	s.metrics.running.Set(float64(running))
}

// emit hands events to the observer. It must be called without s.mu held.
func (s *Scheduler) emit(events ...Event) {
	if s.opts.Observer == nil {
		return
	}
	for _, e := range events {
		s.opts.Observer(e)
	}
}
