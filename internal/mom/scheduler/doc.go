// Package scheduler is the scheduling core of topolayer's multi-operator manager: it decides
// when each operator runs. It does not know how to run an operator (a RunFunc does that) nor
// what the operator reads (callers Notify it of changes, as Causes).
//
// A Scheduler, made by New and run by Start (a controller-runtime manager.Runnable),
// guarantees:
//   - Debounce: an operator runs Debounce after the first change of a burst, once, with
//     every change notified in the meantime, deduplicated and in first-notified order.
//   - One at a time: an operator never runs twice at once; changes that arrive during a run
//     are kept for the next run.
//   - Cooldown: at least Cooldown between the end of one run of an operator and the start of
//     its next.
//   - Budget: each operator may apply MutationsPerMinute mutations per minute (a
//     golang.org/x/time/rate token bucket charged after each run); once spent, the next run
//     waits until the budget holds one mutation again and a BudgetExhausted event is reported.
//   - Concurrency: at most MaxConcurrent operators run at once.
//   - Retries: a failed run is retried, with its causes, after an exponential backoff (a
//     client-go workqueue rate limiter), without waiting for a new change.
//   - Hot loops: an operator that keeps re-triggering itself with changing outputs, or whose
//     outputs oscillate, is reported once (HotLoopDetected) and damped with an exponential
//     backoff until a run converges (see HotLoopOptions).
//   - Add schedules one initial run of the operator, due at once.
//   - Resync: an operator added with OperatorOptions.Resync runs again that long after the
//     end of its last run when nothing it reads changed, with ResyncCause as its one cause
//     (a change notified meanwhile runs it with the change instead, and restarts the period).
//   - Graceful stop: when Start's context is done no new run starts, and Start returns once
//     the running runs have returned.
//
// All time goes through Options.Clock, so tests drive the scheduler with a fake clock. Runs
// are paced by a client-go delaying queue: it only wakes operators up, and a worker starts a
// run only when every rule above allows it, otherwise it puts the operator back in the queue
// for the earliest time they will.
//
// Events (RunStarted, RunFinished, HotLoopDetected, BudgetExhausted, BackoffScheduled) go to
// Options.Observer, and Status gives a snapshot of one operator. With Options.Registerer the
// scheduler exports topolayer_scheduler_changes_total{operator},
// topolayer_scheduler_debounced_changes_total{operator}, topolayer_scheduler_queue_depth,
// topolayer_scheduler_running, topolayer_scheduler_runs_total{operator,result},
// topolayer_scheduler_run_duration_seconds{operator}, topolayer_scheduler_hot_loops_total{operator}
// and topolayer_scheduler_budget_waits_total{operator}.
package scheduler
