package manager

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/internal/mom/scheduler"
	"github.com/topolayer/topolayer/namespaces"
)

// StatusFieldManager is the field manager of the status objects.
const StatusFieldManager = "topolayer-manager"

// LabelStatus marks the status objects.
const LabelStatus = "topolayer.dev/status"

// StatusName returns the name of an operator's status object: a ConfigMap in the status
// namespace whose data holds a run (keys result, run, lastRun, and status.yaml with the whole
// RunRecord). A run whose outcome differs from the one the object holds is written at once;
// a run that changed objects on the clusters with the same outcome is written once the
// operator's runs have been quiet for the manager's StatusQuiet, or at the latest after
// statusMaxAge of such runs, so that an operator run on every change does not write its
// status on every change; runs that find everything as it was do not rewrite it
// (topolayer_operator_runs_total counts every run).
func StatusName(operator string) string { return "topolayer-" + operator }

// Status write timing: DefaultStatusQuiet is how long an operator's runs must be quiet
// before the record of a run that changed objects, not the outcome, is written; no such
// record waits more than statusQuietRuns times the quiet time.
const (
	DefaultStatusQuiet = 5 * time.Second
	statusQuietRuns    = 12
)

// statusWriter writes the status objects (a client.Client is one).
type statusWriter interface {
	Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error
}

// reported is what an operator's status object and events last said, so that a run that
// would say the same again costs the API server nothing.
type reported struct {
	// status is the statusKey of the record the status object holds; "" before the first
	// write, or after a failed one (the next run writes it).
	status string
	// outcome is the outcomeKey of the previous run; "" before the first.
	outcome string
}

// record reports a run: it writes the operator's status object at once when the run's
// outcome differs from the record the object holds, defers the write of a run that changed
// something on the clusters with the same outcome (deferStatus), and leaves the object as it
// is after a run that found everything as it was (its run number and times are in the
// metrics). Events are sent only on a transition (a run whose outcome is the previous run's
// sends none). At most one status write per run. Failures to report are logged, never fatal.
func (m *Manager) record(ctx context.Context, st *operatorState, rec RunRecord) {
	if m.status.Cluster == "" || m.status.Namespace == "" {
		return
	}
	st.mu.Lock()
	last := st.reported
	st.mu.Unlock()
	now := reported{status: statusKey(rec), outcome: outcomeKey(rec)}
	switch {
	case now.status != last.status:
		m.takePending(st)
		if !m.writeStatus(ctx, st, rec) {
			now.status = ""
		}
	case rec.Applied > 0:
		m.deferStatus(ctx, st, rec)
	}
	st.mu.Lock()
	if st.reported.status == last.status { // a deferred write that failed meanwhile cleared it
		st.reported.status = now.status
	}
	st.reported.outcome = now.outcome
	st.mu.Unlock()
	if now.outcome == last.outcome {
		return
	}
	switch rec.Result {
	case ResultSucceeded:
		m.event(st.Name, corev1.EventTypeNormal, "RunSucceeded", "run %d: %d inputs, %d mutations, %d applied, %d unchanged in %s", rec.Run, rec.Inputs, rec.Mutations, rec.Applied, rec.Unchanged, rec.Duration)
	case ResultDegraded:
		msg := fmt.Sprintf("run %d: %d applied, %d unchanged; failed controllers: %s", rec.Run, rec.Applied, rec.Unchanged, strings.Join(rec.FailedControllers, "; "))
		if len(rec.NetworkNeeded) > 0 {
			msg += "; " + networkHint(st.Name, rec.NetworkNeeded)
		}
		m.event(st.Name, corev1.EventTypeWarning, "RunDegraded", "%s", msg)
	case ResultRejected:
		m.event(st.Name, corev1.EventTypeWarning, "OutputsRejected", "run %d: %s", rec.Run, rec.Message)
	default:
		m.event(st.Name, corev1.EventTypeWarning, "RunFailed", "run %d: %s", rec.Run, rec.Message)
	}
	for _, c := range rec.Conflicts {
		m.event(st.Name, corev1.EventTypeWarning, "Conflict", "%s", c)
	}
	for _, l := range rec.LeftBehind {
		m.event(st.Name, corev1.EventTypeWarning, "LeftBehind", "%s", l)
	}
}

// pendingStatus is the record of an operator's latest run not yet written to its status
// object, and when the first such run since the last write ended.
type pendingStatus struct {
	rec   *RunRecord
	since time.Time
	timer *time.Timer
}

// statusQuiet is how long an operator's runs must be quiet before a deferred status write.
func (m *Manager) statusQuiet() time.Duration {
	if m.opts.StatusQuiet > 0 {
		return m.opts.StatusQuiet
	}
	return DefaultStatusQuiet
}

// deferStatus keeps rec as the operator's pending status and writes it when the operator's
// runs have been quiet for statusQuiet, or now when records have been pending for
// statusQuietRuns times that long.
func (m *Manager) deferStatus(ctx context.Context, st *operatorState, rec RunRecord) {
	quiet := m.statusQuiet()
	st.mu.Lock()
	p := &st.pending
	if p.rec == nil && m.metrics != nil {
		m.metrics.statusPending.Inc()
	}
	p.rec = &rec
	if p.since.IsZero() {
		p.since = m.opts.Now()
	}
	if m.opts.Now().Sub(p.since) < statusQuietRuns*quiet {
		if p.timer == nil {
			p.timer = time.AfterFunc(quiet, func() { m.flushStatus(context.WithoutCancel(ctx), st) })
		} else {
			p.timer.Reset(quiet)
		}
		st.mu.Unlock()
		return
	}
	st.mu.Unlock()
	m.flushStatus(ctx, st)
}

// takePending takes the operator's pending status record, if any, and stops its timer.
func (m *Manager) takePending(st *operatorState) *RunRecord {
	st.mu.Lock()
	defer st.mu.Unlock()
	p := &st.pending
	if p.timer != nil {
		p.timer.Stop()
	}
	rec := p.rec
	if rec != nil && m.metrics != nil {
		m.metrics.statusPending.Dec()
	}
	*p = pendingStatus{}
	return rec
}

// flushStatus writes the operator's pending status record, if any. A failed write clears
// what the object is known to hold, so that the next run writes it.
func (m *Manager) flushStatus(ctx context.Context, st *operatorState) {
	rec := m.takePending(st)
	if rec == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	if !m.writeStatus(ctx, st, *rec) {
		st.mu.Lock()
		st.reported.status = ""
		st.mu.Unlock()
	}
}

// flushAll writes every operator's pending status record: on shutdown, so that the status
// objects say what the last runs did.
func (m *Manager) flushAll(ctx context.Context) {
	for _, name := range m.order {
		m.flushStatus(ctx, m.ops[name])
	}
}

// statusWriteTimeout bounds one deferred status write.
const statusWriteTimeout = 30 * time.Second

// writeStatus writes rec to the operator's status object; false when it could not.
func (m *Manager) writeStatus(ctx context.Context, st *operatorState, rec RunRecord) bool {
	body, err := yaml.Marshal(rec)
	if err != nil {
		m.log.Error(err, "encode the status", "operator", st.Name)
		return false
	}
	cm := corev1ac.ConfigMap(StatusName(st.Name), m.status.Namespace).
		WithLabels(map[string]string{LabelStatus: "true", namespaces.LabelOperator: st.Name}).
		WithData(map[string]string{
			"result":      rec.Result,
			"run":         strconv.FormatInt(rec.Run, 10),
			"lastRun":     rec.Started,
			"status.yaml": string(body),
		})
	if o := m.owner; o != nil {
		cm.WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion(o.APIVersion).WithKind(o.Kind).WithName(o.Name).WithUID(o.UID))
	}
	if err := m.statusWriter.Apply(ctx, cm, client.FieldOwner(StatusFieldManager), client.ForceOwnership); err != nil {
		m.log.Error(err, "write the status object", "operator", st.Name)
		return false
	}
	m.log.V(1).Info("status written", "operator", st.Name, "run", rec.Run, "result", rec.Result)
	return true
}

// outcomeKey is what a run's events say: its result, message, failed controllers, rejected
// outputs, conflicts and objects left behind. Two runs with the same key are the same outcome.
func outcomeKey(rec RunRecord) string {
	return strings.Join([]string{rec.Result, rec.Message, strings.Join(rec.FailedControllers, "\n"),
		strings.Join(rec.Rejected, "\n"), strings.Join(rec.Conflicts, "\n"), strings.Join(rec.LeftBehind, "\n")}, "\x00")
}

// statusKey is what a run's status says beyond the run itself: the record without its
// number, times, trigger, causes, counts, output size and digest. Whether the outputs
// changed anything is Applied, which record looks at: the digest of the outputs changes
// with every timestamp an operator stamps (--now in its conditions), which the writes
// carry over (apply.CarryTransitionTimes) when nothing else changed.
func statusKey(rec RunRecord) string {
	rec.Run, rec.Started, rec.Duration, rec.Trigger, rec.Causes, rec.Phases = 0, "", "", "", nil, nil
	rec.Applied, rec.Unchanged, rec.Mutations, rec.OutputSize, rec.Digest = 0, 0, 0, 0, ""
	body, err := yaml.Marshal(rec)
	if err != nil {
		return ""
	}
	return string(body)
}

// observe reports the scheduler's hot loops and backoffs as events.
func (m *Manager) observe(e scheduler.Event) {
	switch e.Type {
	case scheduler.HotLoopDetected:
		m.log.Info("hot loop: damping the operator", "operator", e.Operator, "reason", e.Reason)
		m.event(e.Operator, corev1.EventTypeWarning, "HotLoop", "%s: the operator keeps re-triggering itself without converging; its runs are delayed", e.Reason)
	case scheduler.BudgetExhausted:
		m.event(e.Operator, corev1.EventTypeNormal, "BudgetExhausted", "mutation budget spent: next run not before %s", e.Until.UTC().Format("15:04:05"))
	}
}

// event records a Kubernetes event about an operator's status object.
func (m *Manager) event(operator, eventType, reason, format string, args ...any) {
	if m.opts.Recorder == nil || m.status.Namespace == "" {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: m.status.Namespace, Name: StatusName(operator)}
	m.opts.Recorder.Eventf(ref, nil, eventType, reason, "Run", "%s", eventNote(fmt.Sprintf(format, args...)))
}

// eventNoteLimit is the longest note the API server accepts in an event (events.k8s.io/v1
// validation); the whole text is in the status object.
const eventNoteLimit = 1024

// eventNote cuts note to eventNoteLimit bytes, at a rune boundary, marking the cut: a
// run that names many failed controllers must still be reported, not refused.
func eventNote(note string) string {
	if len(note) <= eventNoteLimit {
		return note
	}
	const more = " … (cut; the status object has all of it)"
	cut := eventNoteLimit - len(more)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + more
}
