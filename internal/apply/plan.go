package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// Status is what became of one plan entry.
type Status string

const (
	// StatusApplied: the mutation was written.
	StatusApplied Status = "applied"
	// StatusSkipped: the mutation would have changed nothing and was not sent.
	StatusSkipped Status = "skipped"
	// StatusFailed: the mutation failed (on validation, or when written); Err says why.
	StatusFailed Status = "failed"
	// StatusNotRun: the plan stopped before the entry (validation or an earlier failure).
	StatusNotRun Status = "not-run"
	// StatusValid: on a dry-run, the server would accept the entry but could not be asked
	// what it would store, because an earlier entry of the plan creates what it needs.
	StatusValid Status = "valid"
)

// EntryResult is the outcome of one apply entry of a plan.
type EntryResult struct {
	// Index is the entry's index in Plan.Entries.
	Index int
	// Cluster, Action and Identity are the entry's target cluster, action and target identity.
	Cluster  string
	Action   contract.Action
	Identity contract.Identity
	// Status is what became of it.
	Status Status
	// Change is what the write did, or would do (DryRun): create, change, unchanged, delete.
	Change Change
	// Object is the object as the server stored it, or would store it; Live the object
	// before the write. Either may be nil.
	Object, Live *unstructured.Unstructured
	// Intermediate are the resourceVersions that the entry's requests left before its
	// write (Result.Intermediate).
	Intermediate []string
	// Err is the failure of a failed entry.
	Err error
}

// applyEntries returns the indexes of the plan's apply entries in the order they are
// written. An output directory does not record the order of its operator's requests (the
// format keeps a set per action), so the order is rebuilt from what each write needs:
// Namespaces first, then the other writes of whole objects, then status writes (an object's
// status is written after the object is created), then deletions. Within each phase the
// plan's order is kept.
func applyEntries(plan *plans.Plan) []int {
	var out []int
	for i, e := range plan.Entries {
		if e.Disposition == routing.Apply && e.Mutation != nil {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		return cmp.Compare(writePhase(plan.Entries[a].Mutation), writePhase(plan.Entries[b].Mutation))
	})
	return out
}

// writePhase is the rank of a mutation in the write order of applyEntries.
func writePhase(m *contract.Mutation) int {
	action := m.Metadata.Action
	switch {
	case action == contract.ActionDelete:
		return 3
	case action.IsStatus():
		return 2
	case m.Metadata.ResourceType.Group == "" && m.Metadata.ResourceType.Resource == "namespaces":
		return 0
	default:
		return 1
	}
}

// objectKey names an object on a cluster, for ordering dependencies within a plan.
type objectKey struct {
	cluster string
	group   string
	res     string
	ns      string
	name    string
}

func keyOf(cluster string, id contract.Identity) objectKey {
	return objectKey{cluster, id.Group, id.Resource, id.Namespace, id.Name}
}

// checkPlan runs the static checks of a plan: no rejected entry, a target for every apply
// entry's cluster.
func checkPlan(plan *plans.Plan, targets map[string]Target) error {
	if plan == nil {
		return errors.New("no plan")
	}
	var errs []error
	for _, e := range plan.Rejected() {
		errs = append(errs, fmt.Errorf("entry %s %s is rejected (%s): %s", e.Action, e.Source, e.Rule, e.Reason))
	}
	missing := map[string]bool{}
	for _, i := range applyEntries(plan) {
		c := plan.Entries[i].Target.Cluster
		if targets[c] == nil && !missing[c] {
			missing[c] = true
			errs = append(errs, fmt.Errorf("no target for cluster %q", c))
		}
	}
	return errors.Join(errs...)
}

// preparer is a Target whose validation of a mutation is kept for its write (the parsed
// body, the live object it read, the server's dry-run answer), so that ApplyPlan asks the
// server nothing twice. ClusterTarget is one.
type preparer interface {
	prepare(ctx context.Context, m contract.Mutation, obj *unstructured.Unstructured, level ask, cached bool) (*writer, Result, error)
}

// DryRun asks every target what each apply entry of the plan would do, with server-side
// dry-run: create, change (Object is what the server would store), unchanged, or fail.
// Nothing is written. An entry whose object or namespace an earlier entry creates cannot be
// asked before that entry is written: it is reported StatusValid without a Change. Targets
// that are not DryRunners are not asked: their entries stay StatusNotRun. The error joins
// the static problems of the plan and every failed entry.
func DryRun(ctx context.Context, plan *plans.Plan, targets map[string]Target) ([]EntryResult, error) {
	results, _, err := validate(ctx, plan, targets, askAll)
	return results, err
}

// validate is DryRun, keeping for each entry asked of a preparer what it learned (nil for
// the others). level says what a preparer asks the server (askAll: a dry-run of every write;
// askNothing: the live objects only). DryRunners that are not preparers are asked a dry-run
// whatever the level.
func validate(ctx context.Context, plan *plans.Plan, targets map[string]Target, level ask) ([]EntryResult, []*writer, error) {
	if err := checkPlan(plan, targets); err != nil {
		return nil, nil, err
	}
	if err := checkTokenAccounts(ctx, plan, targets); err != nil {
		return nil, nil, err
	}
	// written: objects an earlier entry writes (an entry of the same object waits for that
	// write), unless that entry was found to change nothing: the live object is then what
	// the later entry will meet; made: namespaces an earlier entry makes (the entries in
	// them wait for it).
	written, made := map[objectKey]bool{}, map[objectKey]bool{}
	var results []EntryResult
	var writers []*writer
	var errs []error
	for _, i := range applyEntries(plan) {
		e := plan.Entries[i]
		m := *e.Mutation
		r := EntryResult{Index: i, Cluster: e.Target.Cluster, Action: m.Metadata.Action, Identity: m.Identity(), Status: StatusNotRun}
		id := m.Identity()
		dependent := written[keyOf(r.Cluster, id)] ||
			(id.Namespace != "" && made[keyOf(r.Cluster, contract.Identity{Version: "v1", Resource: "namespaces", Name: id.Namespace})])
		writesObject := m.Metadata.Action == contract.ActionCreate || m.Metadata.Action == contract.ActionApply
		var w *writer
		target := targets[r.Cluster]
		p, isPreparer := target.(preparer)
		dr, isDryRunner := target.(DryRunner)
		admission := admissionFor(target, e)
		switch {
		case !isPreparer && !isDryRunner:
		case dependent:
			// An earlier entry writes the object: the engine judged a patch of it on that
			// entry's object, and reapply judges it again before writing it.
			r.Status = StatusValid
		default:
			var res Result
			var err error
			ask := level
			if admission != nil {
				ask = askAll // a patch is judged on what the server says it makes
			}
			if isPreparer {
				w, res, err = p.prepare(ctx, m, entryObject(e), ask, true)
			} else {
				res, err = dr.DryRun(ctx, m)
			}
			if err == nil {
				err = admit(admission, e, res)
			}
			r.Change, r.Object, r.Live = res.Change, res.Object, res.Live
			if err != nil {
				r.Status, r.Err = StatusFailed, err
				errs = append(errs, fmt.Errorf("entry %d: %w", i, err))
			} else {
				r.Status = StatusValid
			}
		}
		if writesObject && (w == nil || !w.decided.Skipped) {
			written[keyOf(r.Cluster, id)] = true
		}
		// A Namespace that is already there makes nothing: the entries in it are asked now,
		// ownership included, so that a conflict is found before the first write.
		if writesObject && isNamespace(id) && (r.Status != StatusValid || r.Change == "" || r.Change == ChangeCreate) {
			made[keyOf(r.Cluster, id)] = true
		}
		results = append(results, r)
		writers = append(writers, w)
	}
	// The RBAC the clusters will hold, once what each entry would do is known: a plan whose
	// RBAC writes all change nothing reads no RBAC.
	unchanged := map[int]bool{}
	for k, w := range writers {
		if w != nil && w.decided.Skipped {
			unchanged[results[k].Index] = true
		}
	}
	if err := checkLiveRBAC(ctx, plan, targets, unchanged); err != nil {
		return nil, nil, err
	}
	return results, writers, errors.Join(errs...)
}

// admit asks admission (nil: none) to judge what the write of entry e makes, res: the
// object the server's dry-run returned. A write that changes nothing is not judged.
func admit(admission Admission, e plans.Entry, res Result) error {
	if admission == nil || res.Skipped {
		return nil
	}
	if err := admission.Admit(e, res.Live, res.Object); err != nil {
		return fmt.Errorf("%s %s: refused on what the server says it makes of the live object: %w", e.Action, e.Target.Identity, err)
	}
	return nil
}

// writes counts the entries that would write: not proven unchanged by what validation read.
func writes(results []EntryResult, writers []*writer) int {
	n := 0
	for i, r := range results {
		switch {
		case r.Status != StatusValid && r.Status != StatusNotRun:
		case writers[i] != nil && writers[i].decided.Skipped:
		default:
			n++
		}
	}
	return n
}

// dryRunWrites asks a dry-run of every prepared entry that would write: a plan that writes
// more than one entry is validated whole before its first write.
func dryRunWrites(ctx context.Context, results []EntryResult, writers []*writer) error {
	var errs []error
	for i := range results {
		w, r := writers[i], &results[i]
		if w == nil || w.decided.Skipped || w.asked {
			continue // nothing to write, or the server was asked already
		}
		res, err := w.dryRun(ctx, w.decided)
		r.Change, r.Object, r.Live = res.Change, res.Object, res.Live
		if err != nil {
			r.Status, r.Err = StatusFailed, err
			errs = append(errs, fmt.Errorf("entry %d: %s %s: %w", r.Index, r.Action, r.Identity, err))
			continue
		}
		w.decided = res
	}
	return errors.Join(errs...)
}

// entryObject is the final object of a plan entry (plans.Entry.Object), copied: the
// target writes it without parsing the body again, and the plan keeps its own. nil (an
// entry built without one) makes the target parse the mutation's body, once.
func entryObject(e plans.Entry) *unstructured.Unstructured {
	if e.Object == nil {
		return nil
	}
	return e.Object.DeepCopy()
}

// reapply writes an entry that validation could not prepare for its write: it depends on
// an earlier entry, or an earlier entry wrote its object (rewritten). A rewritten object is
// read from the server, never from the target's cache, which may not have seen that write.
func reapply(ctx context.Context, target Target, e plans.Entry, rewritten bool) (Result, error) {
	p, ok := target.(preparer)
	if !ok {
		return target.Apply(ctx, *e.Mutation)
	}
	ask, admission := askNothing, admissionFor(target, e)
	if admission != nil {
		ask = askAll // judged again, on the object as the earlier entries left it
	}
	w, res, err := p.prepare(ctx, *e.Mutation, entryObject(e), ask, !rewritten)
	if err == nil {
		err = admit(admission, e, res)
	}
	if err != nil {
		return res, err
	}
	return w.commit(ctx)
}

// ApplyPlan validates the whole plan, then applies its apply entries in order on the targets
// named by their clusters, and stops at the first failure.
//
// Validation: a rejected entry, a cluster without a target, an entry whose object is someone
// else's, or one that fails its server-side dry-run (admission, validation, RBAC, conflict)
// means nothing is written; the results then carry the findings. A dry-run is asked only when
// it can prevent a partial write: when more than one entry would write. A plan whose entries
// all prove unchanged but one writes that one alone, and its write is its own validation
// (refused, it wrote nothing). A Patch on a target with an Admission (Options.Admission) is
// always asked a dry-run, and the object the server returns judged, before anything is
// written; one whose object an earlier entry writes is judged just before its own write.
// After validation, each entry is applied (StatusApplied), or skipped when it changes nothing
// (StatusSkipped); the first failure (StatusFailed) stops the plan, and the entries after it
// are StatusNotRun. The repeats of Events (folds) are written after the other entries, and
// only when one of those changed the cluster.
//
// What validation learned of an entry on a ClusterTarget is its write's: an existing object
// that the entry would not change costs one request (the read that shows it unchanged, none
// when the target's cache shows it) for the whole apply, and a write sends nothing but itself
// after its validation. A server-side apply of an object the target wrote last is not read
// first: it carries the resourceVersion that write left as a precondition, and is read and
// decided again only when someone changed the object since. An entry is read again when an
// earlier entry of the plan wrote its object, or when validation could not ask the server
// before that earlier entry (it creates the object or its namespace).
func ApplyPlan(ctx context.Context, plan *plans.Plan, targets map[string]Target) ([]EntryResult, error) {
	results, writers, err := validate(ctx, plan, targets, askNothing)
	if err == nil {
		dropIdleRepeats(results, writers)
	}
	if err == nil && writes(results, writers) > 1 {
		err = dryRunWrites(ctx, results, writers)
	}
	if err != nil {
		for i := range results {
			if results[i].Status != StatusFailed {
				results[i].Status = StatusNotRun
			}
		}
		return results, fmt.Errorf("the plan failed validation, nothing was written: %w", err)
	}
	// The repeats of Events are written last, and only when the plan changed something else:
	// an update the server stored as it was changed nothing, and neither did its run.
	var folds, rest []int
	for i := range results {
		if w := writers[i]; w != nil && w.decided.Change == ChangeFold {
			folds = append(folds, i)
		} else {
			rest = append(rest, i)
		}
	}
	written := map[objectKey]bool{}
	applied, done := 0, 0
	changed := false
	notRun := func(idx []int) {
		for _, j := range idx {
			results[j].Status, results[j].Change, results[j].Object, results[j].Live = StatusNotRun, "", nil, nil
		}
	}
	write := func(order, after []int) error {
		for n, i := range order {
			r := &results[i]
			if ctx.Err() != nil {
				// Stopped between two entries: what was written is whole, the rest untouched.
				notRun(order[n:])
				notRun(after)
				return &InterruptedError{Cause: context.Cause(ctx), Written: applied, Done: done, Total: len(results), Next: r.Index}
			}
			key := keyOf(r.Cluster, r.Identity)
			var res Result
			var err error
			wctx, release := inFlight(ctx)
			w := writers[i]
			if w != nil && !written[key] {
				res, err = w.commit(wctx)
			} else {
				res, err = reapply(wctx, targets[r.Cluster], plan.Entries[r.Index], written[key])
			}
			release()
			r.Change, r.Object, r.Live, r.Intermediate = res.Change, res.Object, res.Live, res.Intermediate
			switch {
			case err != nil:
				r.Status, r.Err = StatusFailed, err
				notRun(order[n+1:])
				notRun(after)
				return fmt.Errorf("entry %d: %w", r.Index, err)
			case res.Skipped:
				r.Status = StatusSkipped
			default:
				r.Status = StatusApplied
				written[key] = true
				applied++
				// A new Event is no change of the cluster's state (see dropIdleRepeats).
				changed = changed || w == nil || !w.foldsEvents()
			}
			done++
		}
		return nil
	}
	if err := write(rest, folds); err != nil {
		return results, err
	}
	if !changed {
		for _, i := range folds {
			skipRepeat(results, writers, i)
			results[i].Status = StatusSkipped
		}
		return results, nil
	}
	if err := write(folds, nil); err != nil {
		return results, err
	}
	return results, nil
}

// inFlightGrace is how long the write in flight when ApplyPlan's context is canceled may
// still take: it is finished, not cut off halfway, unless the server does not answer.
const inFlightGrace = 30 * time.Second

// inFlight returns the context of one entry's write: not canceled with ctx, so that a
// signal stops the plan after the entry in flight rather than in the middle of it, but
// canceled inFlightGrace after ctx is. done releases it.
func inFlight(ctx context.Context) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(inFlightGrace, func() { cancel(context.Cause(ctx)) })
		context.AfterFunc(wctx, func() { t.Stop() })
	})
	return wctx, func() { stop(); cancel(nil) }
}

// InterruptedError is ApplyPlan's error when its context was canceled (a signal, a
// shutdown) during the writes: the plan stopped after the entry in flight. The entries
// before Next are as their results say; Next and the entries after it were not run. The
// writes are idempotent: applying the same plan again finishes it, skipping what is
// already as planned.
type InterruptedError struct {
	// Cause is why the context was canceled.
	Cause error
	// Written counts the entries that wrote (StatusApplied); Done those that were run
	// (applied or skipped as unchanged), of Total.
	Written, Done, Total int
	// Next is the plan index of the first entry not run.
	Next int
}

// Error implements error. It does not repeat the cause, which the caller knows (the signal
// it reports); Unwrap returns it.
func (e *InterruptedError) Error() string {
	return fmt.Sprintf("stopped after %d of %d entries (%d written), before entry %d: the %d entries from it on were not run; apply the same plan again to finish it",
		e.Done, e.Total, e.Written, e.Next, e.Total-e.Done)
}

// Unwrap returns the cause.
func (e *InterruptedError) Unwrap() error { return e.Cause }
