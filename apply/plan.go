package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
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
func applyEntries(plan *translate.Plan) []int {
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
func checkPlan(plan *translate.Plan, targets map[string]Target) error {
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
func DryRun(ctx context.Context, plan *translate.Plan, targets map[string]Target) ([]EntryResult, error) {
	results, _, err := validate(ctx, plan, targets, askAll)
	return results, err
}

// validate is DryRun, keeping for each entry asked of a preparer what it learned (nil for
// the others). level says what a preparer asks the server (askAll: a dry-run of every write;
// askNothing: the live objects only). DryRunners that are not preparers are asked a dry-run
// whatever the level.
func validate(ctx context.Context, plan *translate.Plan, targets map[string]Target, level ask) ([]EntryResult, []*writer, error) {
	if err := checkPlan(plan, targets); err != nil {
		return nil, nil, err
	}
	created := map[objectKey]bool{}
	var results []EntryResult
	var writers []*writer
	var errs []error
	for _, i := range applyEntries(plan) {
		e := plan.Entries[i]
		m := *e.Mutation
		r := EntryResult{Index: i, Cluster: e.Target.Cluster, Action: m.Metadata.Action, Identity: m.Identity(), Status: StatusNotRun}
		id := m.Identity()
		dependent := created[keyOf(r.Cluster, id)] ||
			(id.Namespace != "" && created[keyOf(r.Cluster, contract.Identity{Version: "v1", Resource: "namespaces", Name: id.Namespace})])
		if m.Metadata.Action == contract.ActionCreate || m.Metadata.Action == contract.ActionApply {
			created[keyOf(r.Cluster, id)] = true
		}
		var w *writer
		target := targets[r.Cluster]
		p, isPreparer := target.(preparer)
		dr, isDryRunner := target.(DryRunner)
		switch {
		case !isPreparer && !isDryRunner:
		case dependent:
			r.Status = StatusValid
		default:
			var res Result
			var err error
			if isPreparer {
				w, res, err = p.prepare(ctx, m, entryObject(e), level, true)
			} else {
				res, err = dr.DryRun(ctx, m)
			}
			r.Change, r.Object, r.Live = res.Change, res.Object, res.Live
			if err != nil {
				r.Status, r.Err = StatusFailed, err
				errs = append(errs, fmt.Errorf("entry %d: %w", i, err))
			} else {
				r.Status = StatusValid
			}
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
		if w == nil || w.decided.Skipped {
			continue
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

// entryObject is the final object of a plan entry (translate.Entry.Object), copied: the
// target writes it without parsing the body again, and the plan keeps its own. nil (an
// entry built without one) makes the target parse the mutation's body, once.
func entryObject(e translate.Entry) *unstructured.Unstructured {
	if e.Object == nil {
		return nil
	}
	return e.Object.DeepCopy()
}

// reapply writes an entry that validation could not prepare for its write: it depends on
// an earlier entry, or an earlier entry wrote its object (rewritten). A rewritten object is
// read from the server, never from the target's cache, which may not have seen that write.
func reapply(ctx context.Context, target Target, e translate.Entry, rewritten bool) (Result, error) {
	p, ok := target.(preparer)
	if !ok {
		return target.Apply(ctx, *e.Mutation)
	}
	w, res, err := p.prepare(ctx, *e.Mutation, entryObject(e), askNothing, !rewritten)
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
// (refused, it wrote nothing). After validation, each entry is applied (StatusApplied), or
// skipped when it changes nothing (StatusSkipped); the first failure (StatusFailed) stops the
// plan, and the entries after it are StatusNotRun.
//
// What validation learned of an entry on a ClusterTarget is its write's: an existing object
// that the entry would not change costs one request (the read that shows it unchanged, none
// when the target's cache shows it) for the whole apply, and a write sends nothing but itself
// after its validation. A server-side apply of an object the target wrote last is not read
// first: it carries the resourceVersion that write left as a precondition, and is read and
// decided again only when someone changed the object since. An entry is read again when an
// earlier entry of the plan wrote its object, or when validation could not ask the server
// before that earlier entry (it creates the object or its namespace).
func ApplyPlan(ctx context.Context, plan *translate.Plan, targets map[string]Target) ([]EntryResult, error) {
	results, writers, err := validate(ctx, plan, targets, askNothing)
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
	written := map[objectKey]bool{}
	for i := range results {
		r := &results[i]
		key := keyOf(r.Cluster, r.Identity)
		var res Result
		var err error
		if w := writers[i]; w != nil && !written[key] {
			res, err = w.commit(ctx)
		} else {
			res, err = reapply(ctx, targets[r.Cluster], plan.Entries[r.Index], written[key])
		}
		r.Change, r.Object, r.Live, r.Intermediate = res.Change, res.Object, res.Live, res.Intermediate
		switch {
		case err != nil:
			r.Status, r.Err = StatusFailed, err
			for j := i + 1; j < len(results); j++ {
				results[j].Status, results[j].Change, results[j].Object, results[j].Live = StatusNotRun, "", nil, nil
			}
			return results, fmt.Errorf("entry %d: %w", r.Index, err)
		case res.Skipped:
			r.Status = StatusSkipped
		default:
			r.Status = StatusApplied
			written[key] = true
		}
	}
	return results, nil
}
