package manager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted/serviceca"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/gather"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/internal/mom/scheduler"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// Result values of a run, in status objects, events and metrics.
const (
	ResultSucceeded = "Succeeded" // applied (or nothing to change)
	ResultFailed    = "Failed"    // gathering, the operator, reading its outputs, or applying failed
	ResultRejected  = "Rejected"  // the outputs broke the declarations: nothing applied
	// ResultDegraded: the operator exited non-zero, some of its controllers failed, and
	// what it wrote was applied (config.ApplyOnControllerFailure).
	ResultDegraded = "Degraded"
)

// RunRecord is what one run did; the status object holds the last one.
type RunRecord struct {
	Operator  string   `json:"operator"`
	Run       int64    `json:"run"`
	Result    string   `json:"result"`
	Message   string   `json:"message,omitempty"`
	Started   string   `json:"started"`
	Duration  string   `json:"duration"`
	Trigger   string   `json:"trigger"`
	Causes    []string `json:"causes,omitempty"`
	Inputs    int      `json:"inputs"`
	Mutations int      `json:"mutations"`
	Applied   int      `json:"applied"`
	Unchanged int      `json:"unchanged"`
	Rejected  []string `json:"rejected,omitempty"`
	// FailedControllers name the controllers that failed or panicked, with their errors.
	FailedControllers []string `json:"failedControllers,omitempty"`
	// SkippedControllers name the controllers the run did not run (controller-results.yaml):
	// those the operator's controllers setting leaves out (operators[].controllers), and
	// those the operator itself skipped.
	SkippedControllers []string `json:"skippedControllers,omitempty"`
	Conflicts          []string `json:"conflicts,omitempty"`
	// LeftBehind name the objects an earlier run placed for the operator that it no longer
	// writes while it writes others of their family (a name pattern of its declarations),
	// and that nothing deletes (plans.Plan.LeftBehind): what it copied was removed.
	LeftBehind []string `json:"leftBehind,omitempty"`
	Sandbox    string   `json:"sandbox,omitempty"`
	// NetworkNeeded are the destinations (HOST:PORT, or HOST) a failed run tried to reach
	// from its sandbox, which gives no network but to operators[].egress: read from the
	// operator's stderr and its controllers' errors (runner.NetworkNeeds).
	NetworkNeeded []string `json:"networkNeeded,omitempty"`
	// Draws says, when the run drew more than once (Operator.Draws), what each draw wrote
	// and which one was applied.
	Draws string `json:"draws,omitempty"`
	// EnvFromInputs name the variables the run's environment took from its inputs
	// (config.Operator.EnvFromInputs); their values are not shown.
	EnvFromInputs []string `json:"envFromInputs,omitempty"`
	OutputSize    int64    `json:"outputBytes"`
	Digest        string   `json:"digest,omitempty"`
	// Phases is how long each phase took: gather, operator, apply.
	Phases map[string]string `json:"phases,omitempty"`
}

// phase records in rec how long the phase that started at start took.
func (m *Manager) phase(rec *RunRecord, name string, start time.Time) {
	if rec.Phases == nil {
		rec.Phases = map[string]string{}
	}
	rec.Phases[name] = m.opts.Now().Sub(start).Round(time.Millisecond).String()
}

// run is the scheduler's RunFunc: gather → run → read → translate (filter) → apply → record.
func (m *Manager) run(ctx context.Context, name string, causes []scheduler.Cause) scheduler.Outcome {
	st := m.ops[name]
	st.mu.Lock()
	st.runs++
	seq := st.runs
	st.mu.Unlock()
	start := m.opts.Now()
	rec := RunRecord{Operator: name, Run: seq, Started: start.UTC().Format("2006-01-02T15:04:05Z"), Result: ResultSucceeded}
	rec.Trigger = triggerOf(causes)
	for _, c := range causes {
		rec.Causes = append(rec.Causes, causeString(c))
	}
	// The scheduler named the operator and the run on the logger of ctx (WithValues once per
	// run); adding them again would write each key twice.
	log := logr.FromContextOrDiscard(ctx)
	dir := filepath.Join(m.opts.WorkDir, name, strconv.FormatInt(seq, 10))

	// A run started is finished, even on shutdown: a plan cut off while being applied would
	// leave the clusters between two states. The operator's own timeout bounds it.
	runCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), runTimeout)
	defer cancel()
	// The clusters as they are connected now: a new connection made meanwhile waits for
	// this run to end before the old one stops. Operators run only once connected.
	conn := m.acquire()
	if conn == nil {
		return scheduler.Outcome{Err: errors.New("not connected")}
	}
	defer conn.release()
	out, err := m.runOnce(logr.NewContext(runCtx, log), st, conn, dir, &rec)
	rec.Duration = m.opts.Now().Sub(start).Round(1e6).String()
	switch {
	case err == nil && len(rec.FailedControllers) > 0:
		rec.Result = ResultDegraded
		rec.Message = fmt.Sprintf("%d controllers failed, what the others wrote was applied: %s", len(rec.FailedControllers), rec.FailedControllers[0])
		m.keepLast(name, dir, LastSucceeded)
	case err == nil:
		m.keepLast(name, dir, LastSucceeded)
	case errors.Is(err, errRejected):
		rec.Result, rec.Message = ResultRejected, err.Error()
	default:
		rec.Result, rec.Message = ResultFailed, err.Error()
	}
	if len(rec.NetworkNeeded) > 0 && rec.Result != ResultSucceeded {
		rec.Message += "; " + networkHint(name, rec.NetworkNeeded)
	}
	if err != nil {
		log.Error(err, "run failed", "trigger", rec.Trigger, "causes", rec.Causes, "dir", dir)
		m.keepLast(name, dir, LastFailed)
	} else {
		log.Info("run finished", "trigger", rec.Trigger, "causes", rec.Causes, "applied", rec.Applied, "unchanged", rec.Unchanged, "duration", rec.Duration, "phases", rec.Phases)
	}
	m.metrics.observeRun(rec, m.opts.Now().Sub(start))
	m.record(ctx, st, rec)
	return scheduler.Outcome{Mutations: rec.Applied, Digest: out, Err: err}
}

// Triggers of a run, in status objects and the runs_total metric.
const (
	// TriggerStart: the run every operator gets when the manager starts.
	TriggerStart = "start"
	// TriggerChange: an object the operator reads was changed by someone else.
	TriggerChange = "change"
	// TriggerOwnWrites: only the operator's own writes changed what it reads; the run checks
	// that it has converged (the scheduler damps operators that never do).
	TriggerOwnWrites = "own-writes"
	// TriggerConnect: a late cluster was connected again, with a new configuration (a
	// rotated kubeconfig); every operator runs over the new connection.
	TriggerConnect = "connect"
	// TriggerResync: nothing the operator reads changed for its resync period
	// (config.Operator.Resync); the run on unchanged inputs writes nothing if the operator
	// has nothing more to do.
	TriggerResync = "resync"
	// TriggerHostedControlPlane: what the hypershift profile reads of the HostedControlPlane
	// changed (its availability policy, node selector, tolerations, labels, annotations,
	// release image, platform, networks, proxy or additional trust bundle); every operator
	// runs, and its outputs are placed with the new profile.
	TriggerHostedControlPlane = "hosted-control-plane"
)

// triggerOf names what caused a run with causes.
func triggerOf(causes []scheduler.Cause) string {
	if len(causes) == 0 {
		return TriggerStart
	}
	if !slices.ContainsFunc(causes, func(c scheduler.Cause) bool { return !c.Resync }) {
		return TriggerResync
	}
	causes = slices.DeleteFunc(slices.Clone(causes), func(c scheduler.Cause) bool { return c.Resync })
	if !slices.ContainsFunc(causes, func(c scheduler.Cause) bool { return !isConnectCause(c) }) {
		return TriggerConnect
	}
	if !slices.ContainsFunc(causes, func(c scheduler.Cause) bool { return !isHostedControlPlaneCause(c) && !c.SelfInflicted }) &&
		slices.ContainsFunc(causes, isHostedControlPlaneCause) {
		return TriggerHostedControlPlane
	}
	for _, c := range causes {
		if !c.SelfInflicted {
			return TriggerChange
		}
	}
	return TriggerOwnWrites
}

// runTimeout bounds a whole run (gather, operator, apply) past a shutdown; the operator's
// own limits are usually much shorter.
const runTimeout = 10 * time.Minute

// errRejected marks runs whose outputs break the declarations.
var errRejected = errors.New("outputs rejected")

// runOnce does the work of one run in dir and returns the digest of the outputs.
func (m *Manager) runOnce(ctx context.Context, st *operatorState, conn *connection, dir string, rec *RunRecord) (digest string, err error) {
	// Nothing is planned with a profile that cannot read the HostedControlPlane.
	if err := m.currentProfile().refusal(); err != nil {
		return "", err
	}
	// Gather the inputs from the caches, in standalone form.
	t0 := m.opts.Now()
	g, err := gather.Gather(ctx, gather.Options{Placement: m.topo, Inputs: st.inputs, Outputs: st.outputs, Readers: conn.readers, Operator: st.Name})
	if err != nil {
		return "", fmt.Errorf("gather the inputs: %w", err)
	}
	rec.Inputs = len(g.Objects)
	m.resolveReferences(st, g.Objects)

	// Run the operator offline: over the objects when it runs in process, else over a
	// directory written for it.
	var outputs *contract.OutputDir
	var runErr, readErr error
	if mem, ok := st.Runner.(runner.ObjectRunner); ok {
		// Nothing is on disk; a failed run leaves its directories for inspection, as a
		// binary's does.
		defer func() {
			if err != nil {
				keepForInspection(dir, g.Objects, outputs)
			}
		}()
		m.phase(rec, "gather", t0)
		t0 = m.opts.Now()
		now := m.opts.Now()
		draws := drawAll(st.drawsFor(rec.Trigger), func(int) (d draw) {
			d.out, d.res, d.runErr = mem.RunObjects(ctx, runner.ObjectsRequest{Operator: st.Name, Inputs: g.Objects, Now: now, Controllers: st.Controllers})
			if d.out == nil {
				d.readErr = errors.New("the operator returned no outputs")
			}
			return d
		})
		chosen := bestDraw(draws, m.planWrites(st))
		recordDraws(ctx, draws, chosen, rec)
		d := draws[chosen]
		outputs, runErr, readErr = d.out, d.runErr, d.readErr
		if d.res != nil {
			rec.Sandbox, rec.OutputSize = d.res.Sandbox, d.res.OutputBytes
		}
		m.phase(rec, "operator", t0)
	} else if outputs, runErr, readErr, err = m.runDirs(ctx, st, dir, g.Objects, rec, t0); err != nil {
		return "", err
	}
	if runErr != nil && (st.OnControllerFailure == config.RefuseOnControllerFailure || !exitedNonZero(runErr)) {
		return "", fmt.Errorf("run the operator: %w", runErr)
	}

	// Filter and translate its outputs.
	if rec.FailedControllers, err = partialRun(runErr, outputs, readErr); err != nil {
		return "", err
	}
	rec.SkippedControllers = skippedControllers(outputs)
	if readErr != nil {
		return "", fmt.Errorf("%w: read the output dir: %w", errRejected, readErr)
	}
	rec.Mutations = len(outputs.Mutations)
	digest = digestOf(outputs.Mutations)
	rec.Digest = digest[:12]
	// The profile as it is now: a change of the HostedControlPlane made since the run started
	// runs the operator again.
	prof := m.currentProfile()
	if err := prof.refusal(); err != nil {
		return digest, err
	}
	plan := prof.engines[st.Name].Plan(outputs)
	if rejected := plan.Rejected(); len(rejected) > 0 {
		for _, e := range rejected {
			rec.Rejected = append(rec.Rejected, fmt.Sprintf("%s %s: %s", e.Action, e.Source, e.Reason))
		}
		m.metrics.rejected.WithLabelValues(st.Name).Add(float64(len(rejected)))
		return digest, fmt.Errorf("%w: %d of %d mutations, nothing applied: %s", errRejected, len(rejected), len(plan.Entries), rec.Rejected[0])
	}

	// Conflicts with what other operators wrote.
	var ids []contract.Identity
	for _, e := range plan.Entries {
		if e.Disposition == routing.Apply && e.Source.Name != "" && !isEvent(e.Source) {
			ids = append(ids, e.Source)
		}
	}
	m.mu.Lock()
	conflicts := m.writes.Record(st.Name, ids)
	m.mu.Unlock()
	for _, c := range conflicts {
		rec.Conflicts = append(rec.Conflicts, c.String())
		m.metrics.conflicts.WithLabelValues(st.Name).Inc()
	}

	// Apply: validated whole first, so a refused entry writes nothing.
	t0 = m.opts.Now()
	m.beginApply(st)
	results, err := apply.ApplyPlan(ctx, plan, conn.targets[st.Name])
	var caErr error
	if err == nil && conn.serviceCA != nil {
		caErr = m.fillServiceCA(ctx, st, conn.serviceCA, plan, g.Objects, rec)
	}
	m.remember(st, rec.Run, results)
	m.phase(rec, "apply", t0)
	for _, r := range results {
		switch r.Status {
		case apply.StatusApplied:
			rec.Applied++
			logr.FromContextOrDiscard(ctx).V(1).Info("applied", "cluster", r.Cluster, "action", r.Action, "object", r.Identity.String(), "change", r.Change)
		case apply.StatusSkipped:
			rec.Unchanged++
		}
		// An object on a cluster that another operator (or another source) wrote: the plan
		// was refused whole; the conflict is reported like one between two operators.
		if conflict := (*apply.ConflictError)(nil); errors.As(r.Err, &conflict) {
			rec.Conflicts = append(rec.Conflicts, conflict.Error())
			m.metrics.conflicts.WithLabelValues(st.Name).Inc()
		}
	}
	if err != nil {
		return digest, fmt.Errorf("apply: %w", err)
	}
	if caErr != nil {
		return digest, fmt.Errorf("apply: service CA bundles: %w", caErr)
	}
	rec.LeftBehind = st.leftBehind(ctx, plan)
	// The kubeconfig Secrets of its operands' guest identities, once the plan wrote their
	// service accounts on the guest; the refresher keeps their tokens fresh from then on.
	if guest := conn.guests[st.Name]; guest != nil && len(plan.GuestIdentities) > 0 {
		issued, err := guest.Ensure(ctx, plan.GuestIdentities)
		m.refresher.Track(guest, issued)
		if err != nil {
			return digest, fmt.Errorf("apply: guest kubeconfigs: %w", err)
		}
	}
	return digest, nil
}

// fillServiceCA fills the service CA bundle of the ConfigMaps the operator's operands ask
// it for, which no service-ca operator fills on the management cluster (package serviceca):
// those the plan wrote and those the operator reads. Its writes are counted as applied and
// known as the operator's own, like the plan's.
func (m *Manager) fillServiceCA(ctx context.Context, st *operatorState, in *serviceca.Injector, plan *plans.Plan, inputs []*contract.InputObject, rec *RunRecord) error {
	filled, err := in.Inject(ctx, m.topo.ServiceCACandidates(plan, st.outputs, inputs))
	ns := in.Namespace()
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, f := range filled {
		if !f.Written {
			continue
		}
		rec.Applied++
		logr.FromContextOrDiscard(ctx).V(1).Info("service CA bundle filled", "configmap", ns+"/"+f.Name)
		st.written.add(rec.Run, writtenKey(routing.ClusterManagement, contract.Identity{Resource: "configmaps", Namespace: ns, Name: f.Name}), f.ResourceVersion)
	}
	return err
}

// runDirs runs an operator binary over a directory: it writes the input directory into
// dir/input, runs the operator (as many draws as the run gets, into dir/output,
// dir/output-2, ...), and reads the outputs. It returns the outputs of the draw to apply,
// its run's error and its reader's; err when the input directory could not be written.
func (m *Manager) runDirs(ctx context.Context, st *operatorState, dir string, inputs []*contract.InputObject, rec *RunRecord, t0 time.Time) (out *contract.OutputDir, runErr, readErr, err error) {
	inputDir := filepath.Join(dir, "input")
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, nil, err
	}
	if err := contract.WriteInputDir(inputDir, inputs); err != nil {
		return nil, nil, nil, fmt.Errorf("write the input dir: %w", err)
	}
	env, unset, err := inputEnv(st.EnvFromInputs, inputs, dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read its environment from its inputs: %w", err)
	}
	// Names for the status and the log, never the values.
	if rec.EnvFromInputs = slices.Sorted(maps.Keys(env)); len(st.EnvFromInputs) > 0 {
		logr.FromContextOrDiscard(ctx).V(1).Info("environment from inputs", "set", rec.EnvFromInputs, "unset", unset)
	}
	m.phase(rec, "gather", t0)

	t0 = m.opts.Now()
	now := m.opts.Now()
	draws := drawAll(st.drawsFor(rec.Trigger), func(i int) (d draw) {
		d.res, d.runErr = st.Runner.Run(ctx, runner.Request{Operator: st.Name, InputDir: inputDir, OutputDir: drawDir(dir, i), Now: now, Controllers: st.Controllers, Env: env})
		d.out, d.readErr = contract.ReadOutputDir(drawDir(dir, i), contract.ReadOptions{})
		return d
	})
	chosen := bestDraw(draws, m.planWrites(st))
	recordDraws(ctx, draws, chosen, rec)
	d := draws[chosen]
	if d.res != nil {
		rec.Sandbox, rec.OutputSize = d.res.Sandbox, d.res.OutputBytes
	}
	m.phase(rec, "operator", t0)
	if d.runErr != nil && d.res != nil {
		rec.NetworkNeeded = runner.NetworkNeeds(d.res.Stderr + "\n" + strings.Join(controllerErrors(d.out), "\n"))
	}
	return d.out, d.runErr, d.readErr, nil
}

// beginApply marks the operator as applying: changes of what it reads are held until
// remember knows which of them its writes caused.
func (m *Manager) beginApply(st *operatorState) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.applying = true
}

// remember records the resourceVersion each write left, so that the change it causes is
// known as the operator's own (a self-inflicted cause), ends the applying state, and
// notifies the scheduler of the changes held meanwhile.
func (m *Manager) remember(st *operatorState, run int64, results []apply.EntryResult) {
	st.mu.Lock()
	for _, r := range results {
		if r.Object == nil || (r.Status != apply.StatusApplied && r.Status != apply.StatusSkipped) {
			continue
		}
		key := writtenKey(r.Cluster, r.Identity)
		for _, rv := range r.Intermediate {
			st.written.add(run, key, rv)
		}
		st.written.add(run, key, r.Object.GetResourceVersion())
	}
	held := st.held
	st.held, st.applying = nil, false
	for i := range held {
		held[i].cause.SelfInflicted = st.written.has(held[i].key, held[i].resourceVersion)
	}
	st.mu.Unlock()
	for _, h := range held {
		m.scheduler.Notify(st.Name, h.cause)
	}
}

// leftBehind returns the objects that the operator's earlier plans placed and this applied
// plan leaves behind (plans.Plan.LeftBehind over its declarations and supplements), and
// records what this plan placed and deleted. What earlier plans placed is known since the
// manager started: a restart forgets it.
func (st *operatorState) leftBehind(ctx context.Context, plan *plans.Plan) []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	left := plan.LeftBehind(st.placed, st.outputs)
	for _, e := range plan.Entries {
		if e.Disposition != routing.Apply || e.Source.Name == "" || isEvent(e.Source) {
			continue
		}
		k := e.Source.Key()
		i := slices.IndexFunc(st.placed, func(id contract.Identity) bool { return id.Key() == k })
		switch {
		case e.Action == contract.ActionDelete && i >= 0:
			st.placed = slices.Delete(st.placed, i, i+1)
		case e.Action != contract.ActionDelete && i < 0:
			st.placed = append(st.placed, e.Source)
		}
	}
	var out []string
	for _, id := range left {
		logr.FromContextOrDiscard(ctx).Info("left behind: no longer written, not deleted", "object", id.String())
		out = append(out, fmt.Sprintf("%s: placed by an earlier run, no longer written while others of its family are, and not deleted (the operator cannot record the Delete of a namespaced object)", id))
	}
	return out
}

// resolveReferences narrows the index to the objects the operator's references name now.
func (m *Manager) resolveReferences(st *operatorState, objs []*contract.InputObject) {
	refs := st.inputs.ApplyConfigurationResources.ResourceReferences
	if len(refs) == 0 {
		return
	}
	types := map[[2]string]bool{}
	for _, r := range refs {
		for _, t := range []*contract.ResourceTypeIdentifier{typeOf(r)} {
			if t != nil {
				types[[2]string{t.Group, t.Resource}] = true
			}
		}
	}
	var named []contract.Identity
	for _, o := range objs {
		if types[[2]string{o.Group, o.Resource}] {
			named = append(named, o.Identity())
		}
	}
	m.ix.Resolve(st.Name, named)
}

func typeOf(r contract.ResourceReference) *contract.ResourceTypeIdentifier {
	switch {
	case r.ImplicitNamespacedReference != nil:
		return &r.ImplicitNamespacedReference.ResourceTypeIdentifier
	case r.ExplicitNamespacedReference != nil:
		return &r.ExplicitNamespacedReference.ResourceTypeIdentifier
	case r.ClusterScopedReference != nil:
		return &r.ClusterScopedReference.ResourceTypeIdentifier
	}
	return nil
}

// The directories, under WorkDir/<operator>/, where the manager keeps the input and output
// directories (input/, output/) of an operator's last successful and last failed runs: to
// see what the operator read and wrote (topolayer plan --from .../output), and why it failed.
const (
	LastSucceeded = "last"
	LastFailed    = "last-failed"
)

// keepLast keeps the directory of a run as WorkDir/<name>/<as>, replacing the one kept before.
func (m *Manager) keepLast(name, dir, as string) {
	last := filepath.Join(m.opts.WorkDir, name, as)
	_ = os.RemoveAll(last)
	if err := os.Rename(dir, last); err != nil {
		_ = os.RemoveAll(dir)
	}
}

// digestOf summarises outputs, events left out: they differ on every run by design.
func digestOf(ms []contract.Mutation) string {
	lines := make([]string, 0, len(ms))
	for _, mu := range ms {
		if isEvent(mu.Identity()) {
			continue
		}
		sum := sha256.Sum256(mu.Body)
		lines = append(lines, fmt.Sprintf("%s %s %s %x", mu.Class, mu.Metadata.Action, mu.Identity(), sum[:8]))
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func isEvent(id contract.Identity) bool {
	return id.Resource == "events" && (id.Group == "" || id.Group == "events.k8s.io")
}

func causeString(c scheduler.Cause) string {
	switch {
	case c.Resync:
		return "resync"
	case isConnectCause(c):
		return c.Cluster + ": connected"
	case c.Name == "" && c.Namespace == "":
		return c.Cluster + ": " + schema.GroupResource{Group: c.Group, Resource: c.Resource}.String() + " served"
	}
	s := c.Cluster + ":" + contract.Identity{Group: c.Group, Resource: c.Resource, Namespace: c.Namespace, Name: c.Name}.String()
	if c.SelfInflicted {
		s += " (own write)"
	}
	return s
}
