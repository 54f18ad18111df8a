package manager

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Manager's Prometheus collectors (the scheduler has its own:
// topolayer_scheduler_*).
type metrics struct {
	runs      *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	applied   *prometheus.CounterVec
	rejected  *prometheus.CounterVec
	conflicts *prometheus.CounterVec
	// statusPending counts the operators whose last runs' status record is not written yet
	// (deferred until their runs are quiet).
	statusPending prometheus.Gauge
	// connections counts the connections of each late cluster (the first, and one per
	// new configuration); connectFailures the attempts that failed.
	connections, connectFailures *prometheus.CounterVec
	// lateWatches counts the resources watched once served, after the manager started.
	lateWatches *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	opts := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: "topolayer", Subsystem: "operator", Name: name, Help: help}
	}
	m := &metrics{
		runs:      prometheus.NewCounterVec(opts("runs_total", "Runs by result (Succeeded, Degraded, Failed, Rejected) and trigger (start, change, own-writes, connect, resync, hosted-control-plane)."), []string{"operator", "result", "trigger"}),
		applied:   prometheus.NewCounterVec(opts("applied_mutations_total", "Mutations written to a cluster (unchanged ones are not)."), []string{"operator"}),
		rejected:  prometheus.NewCounterVec(opts("rejected_outputs_total", "Output mutations rejected against the declarations or the placement."), []string{"operator"}),
		conflicts: prometheus.NewCounterVec(opts("conflicts_total", "Objects written by this operator that another operator wrote too."), []string{"operator"}),
		statusPending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "topolayer", Subsystem: "operator", Name: "status_pending",
			Help: "Operators whose status object waits for their runs to be quiet before it is written."}),
		connections: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "topolayer", Subsystem: "cluster", Name: "connections_total",
			Help: "Connections made to a late cluster (the guest, from its kubeconfig Secret): the first, and one per new configuration."}, []string{"cluster"}),
		connectFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "topolayer", Subsystem: "cluster", Name: "connect_failures_total",
			Help: "Attempts to connect a late cluster that failed (retried with backoff)."}, []string{"cluster"}),
		lateWatches: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "topolayer", Subsystem: "cluster", Name: "late_watches_total",
			Help: "Watched resources that a cluster served only after the manager started (their CRD created later)."}, []string{"cluster"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "topolayer", Subsystem: "operator", Name: "run_duration_seconds",
			Help:    "Duration of whole runs: gather, operator, translate and apply.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 16),
		}, []string{"operator", "result"}),
	}
	if reg == nil {
		return m, nil
	}
	var registered []prometheus.Collector
	for _, c := range []prometheus.Collector{m.runs, m.duration, m.applied, m.rejected, m.conflicts, m.statusPending, m.connections, m.connectFailures, m.lateWatches} {
		if err := reg.Register(c); err != nil {
			for _, r := range registered {
				reg.Unregister(r)
			}
			return nil, errors.Join(errors.New("register the manager's metrics"), err)
		}
		registered = append(registered, c)
	}
	return m, nil
}

func (m *metrics) observeRun(rec RunRecord, d time.Duration) {
	m.runs.WithLabelValues(rec.Operator, rec.Result, rec.Trigger).Inc()
	m.duration.WithLabelValues(rec.Operator, rec.Result).Observe(d.Seconds())
	m.applied.WithLabelValues(rec.Operator).Add(float64(rec.Applied))
}
