package scheduler

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are one scheduler's Prometheus collectors; each Scheduler has its own.
type metrics struct {
	changes     *prometheus.CounterVec
	debounced   *prometheus.CounterVec
	queueDepth  prometheus.Gauge
	running     prometheus.Gauge
	runs        *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	hotLoops    *prometheus.CounterVec
	budgetWaits *prometheus.CounterVec
}

const (
	metricsNamespace = "topolayer"
	metricsSubsystem = "scheduler"
)

// newMetrics builds the collectors and registers them with reg, if not nil. On error nothing
// stays registered.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: name, Help: help}
	}
	m := &metrics{
		changes: prometheus.NewCounterVec(prometheus.CounterOpts(opts("changes_total",
			"Changes notified to an operator.")), []string{"operator"}),
		debounced: prometheus.NewCounterVec(prometheus.CounterOpts(opts("debounced_changes_total",
			"Changes coalesced into a run that was already pending.")), []string{"operator"}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts(opts("queue_depth",
			"Operators waiting for a run (not running)."))),
		running: prometheus.NewGauge(prometheus.GaugeOpts(opts("running",
			"Operators running now."))),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts(opts("runs_total",
			"Finished runs by result (success, error).")), []string{"operator", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metricsNamespace, Subsystem: metricsSubsystem, Name: "run_duration_seconds",
			Help:    "Duration of runs.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 16), // 10ms .. ~5.5m
		}, []string{"operator"}),
		hotLoops: prometheus.NewCounterVec(prometheus.CounterOpts(opts("hot_loops_total",
			"Hot loops detected.")), []string{"operator"}),
		budgetWaits: prometheus.NewCounterVec(prometheus.CounterOpts(opts("budget_waits_total",
			"Runs held back by the operator's mutation budget.")), []string{"operator"}),
	}
	if reg == nil {
		return m, nil
	}
	var done []prometheus.Collector
	for _, c := range []prometheus.Collector{m.changes, m.debounced, m.queueDepth, m.running, m.runs, m.duration, m.hotLoops, m.budgetWaits} {
		if err := reg.Register(c); err != nil {
			for _, d := range done {
				reg.Unregister(d)
			}
			return nil, fmt.Errorf("register scheduler metrics: %w", err)
		}
		done = append(done, c)
	}
	return m, nil
}
