package translate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/recovery"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/routing"
)

// Planner plans an output directory one mutation at a time, for a reader that streams it
// (contract.WalkOutputDir): Engine.Plan is Add for each mutation, AddControllerResults, then
// Plan. With a settled function, an entry that no later stage reads or changes is settled as
// soon as it is added (an object the standalone topology writes as the operator wrote it,
// and not one of the kinds the plan-wide checks read: bindings, roles under an RBAC ceiling,
// token Secrets; see settlesAlone): settled is called with it and its body, object and
// metadata file are dropped (and the entry's Mutation and Object: the plan keeps what
// plan.json shows), so that a directory of any size is planned in bounded memory. Every other
// entry holds its object in one form until its rewrite (Engine.holdOnce), and is settled by
// Plan: as soon as the rewrite of the whole plan has finished it, when the checks of the
// whole plan read neither its object nor its operator's (not RBAC, not waiting for the token
// check, its scope facts read), in no particular order and then, with a spill, spilled (see
// settleShared); the rest in plan order. A Planner is used once, by one goroutine.
type Planner struct {
	e       Engine
	works   []*work
	settled func(*plans.Entry) error
	err     error
	// mu serializes the settled function, the spill and err while the plan-wide rewrite
	// settles entries on every core (settleShared).
	mu sync.Mutex
	// late are the entries the plan-wide rewrite spilled (settleShared), in no order; they
	// join spilled, after the others, once the plan is complete. lateWarnings are the
	// warnings spilled entries gained after they were spilled, by their index in spilled.
	late         []plans.Spilled
	lateWarnings map[int][]string
	// writes finds the mutations that write an object twice (check.RuleDuplicateWrite).
	writes check.DuplicateWrites
	// recovery gathers what AddControllerResults needs of the mutations added before it
	// (RuleRecoveredDelete).
	recovery recovery.Log

	// spill, when set (SpillTo), holds the plan.json form of the entries settled while
	// adding; spilled says where each is, spillSummary counts them.
	spill        *plans.SpillWriter
	spillFrom    io.ReaderAt
	spilled      []plans.Spilled
	spillSummary plans.Summary
	// written are the standalone service accounts of the spilled entries that the plan
	// writes (serviceAccountTokens and checkPatchEffects ask it only of service accounts).
	written map[contract.Key]bool
	// roles are the roles settled while adding (settlesAlone), as writtenRoles reads them.
	roles []spilledRole
}

// spilledRole is a Role or ClusterRole the planner settled while adding: its place in the
// plan, and a work that holds what checkRBACContainment reads of it (writtenRole's fields and
// the object) for the bindings that refer to it.
type spilledRole struct {
	class contract.Class
	path  string
	ref   policy.RoleRef
	w     check.Write
}

// writtenRoles returns the roles the plan writes (as check.WrittenRoles(writes) does), those
// settled while adding among them: the last write of each in plan order.
func (p *Planner) writtenRoles(writes []check.Write) map[policy.RoleRef]check.Write {
	if len(p.roles) == 0 {
		return check.WrittenRoles(writes)
	}
	all := slices.Clone(p.roles)
	for _, w := range writes {
		if ref, ok := check.WrittenRole(w); ok {
			m := w.Mutation()
			all = append(all, spilledRole{class: m.Class, path: m.Path, ref: ref, w: w})
		}
	}
	slices.SortStableFunc(all, func(a, b spilledRole) int { return planOrder(a.class, a.path, b.class, b.path) })
	roles := map[policy.RoleRef]check.Write{}
	for _, r := range all {
		roles[r.ref] = r.w
	}
	return roles
}

// Planner returns a planner of the engine; settled, when not nil, is called once for every
// entry as soon as it is final (see Planner).
func (e Engine) Planner(settled func(*plans.Entry) error) *Planner {
	if e.Discovery == nil {
		e.Discovery = contract.DefaultDiscovery()
	}
	if e.Stages == nil {
		e.Stages = StandaloneStages()
	}
	e.composed = compose(e.Stages)
	e.checker = e.newChecker()
	return &Planner{e: e, settled: settled, written: map[contract.Key]bool{}}
}

// Add places one mutation. Its entry is settled at once when nothing later can change it;
// then m's body and object are dropped (with a settled function only).
func (p *Planner) Add(m *contract.Mutation) { p.add(p.e.place(m)) }

// add adds one placed mutation, as Add says.
func (p *Planner) add(w *work) {
	p.writes.Check(w)
	p.recovery.Note(w.m, w.entry.Source, w.src)
	if p.settled != nil && p.e.composed.bodies {
		p.e.holdOnce(w) // the settled function writes only what the rewrite makes
	}
	p.works = append(p.works, w)
	if p.settled == nil || p.err != nil || !p.e.settlesAlone(w) {
		return
	}
	if w.entry.Disposition == routing.Apply {
		p.e.rewrite(w, nil)
	}
	p.e.finish(w)
	if ref, ok := check.WrittenRole(w); ok {
		// checkRBACContainment reads the role for the bindings that refer to it: it keeps
		// what that reads, not the mutation.
		p.roles = append(p.roles, spilledRole{class: w.m.Class, path: w.m.Path, ref: ref, w: &work{
			m:     &contract.Mutation{Metadata: contract.Metadata{Action: w.m.Metadata.Action}},
			entry: plans.Entry{Disposition: w.entry.Disposition, Source: w.entry.Source, Target: w.entry.Target, Object: w.entry.Object},
		}})
	}
	p.settle(w)
	if p.spill != nil && w.settled && p.err == nil && w.entry.Disposition != routing.Rejected {
		if src := w.entry.Source; check.Writes(w) && src.Group == "" && src.Resource == "serviceaccounts" {
			p.written[src.Key()] = true
		}
		p.spillWork(w)
		p.works = p.works[:len(p.works)-1]
	}
}

// SpillTo makes the planner keep the entries it settles while adding in s, not in memory,
// until the plan is written (WritePlan), so that its memory grows with the entries a
// plan-wide stage reads, not with the directory. Only a planner with a settled function
// settles while adding; call SpillTo before the first Add. Rejected entries stay in memory.
func (p *Planner) SpillTo(s plans.Spill) { p.spill, p.spillFrom = plans.NewSpillWriter(s), s }

// settlesAlone reports whether no later stage of the plan reads or changes w: the
// standalone topology's engine writes it as the operator wrote it, under its own identity,
// and the plan-wide checks do not read it. Those are the RBAC checks (every binding, and the
// roles when an RBAC ceiling may refuse them; the containment of bindings reads the roles,
// which the planner keeps: Planner.roles) and serviceAccountTokens (the Secrets that may carry
// a service account's token, and the identities of the service accounts written, which the
// planner keeps: writes).
func (e Engine) settlesAlone(w *work) bool {
	if e.HCPNamespace != "" || e.composed.bodies || e.GuestIdentity != nil {
		return false
	}
	src := w.entry.Source
	switch {
	case w.entry.Disposition == routing.Apply && w.entry.Target.Identity != src:
		return false
	case src.Group == policy.GroupRBAC && (src.Resource == policy.ResourceRoles || src.Resource == policy.ResourceClusterRoles):
		// Without an RBAC ceiling no check refuses a role of the standalone topology; the
		// containment of the bindings that refer to it reads it (Planner.roles).
		return e.Policy == nil || e.Policy.RBAC == nil
	case src.Group == policy.GroupRBAC:
		return false
	case src.Group == "" && src.Resource == "secrets":
		return !check.MayCarryToken(w)
	}
	return true
}

// finish sets the final object of an entry and runs the checks that read one object.
func (e Engine) finish(w *work) {
	switch {
	case w.entry.Disposition != routing.Apply:
	case w.final != nil:
		var src map[string]any
		if o := w.source(); o != nil {
			src = o.Object
		}
		obj, err := yamlnode.ObjectOf(w.final.YNode(), src)
		if err != nil {
			w.reject(plans.RuleBody, fmt.Sprintf("%s: the rewritten object is not one object: %v", w.entry.Source, err))
			break
		}
		w.entry.Object = &unstructured.Unstructured{Object: obj}
		if w.entry.Mutation != nil {
			w.entry.Mutation.Object = w.entry.Object
		}
	case w.unchanged:
		w.entry.Object = w.src
	}
	// Policy is the last stage: it checks the objects as they will be written, after every
	// transform.
	e.checker.Object(w)
	if w.final != nil && e.HCPNamespace != "" {
		// What the plan-wide scope check reads of the object, while its tree is at hand.
		w.facts = scope.ReadFacts(w.final, &w.entry, e.HCPNamespace)
	}
	w.finished = true
	if w.entry.Object != nil && !w.unchanged {
		// The object is the entry's now: the trees go, so that a plan holds each object once
		// until it is settled. What reads the final object later reads it parsed, or its facts
		// (the scope check, read above); what reads the operator's object reads w.src, or
		// builds its tree again (tree).
		w.final, w.obj = nil, nil
		w.releaseTree()
	}
}

// settle hands a final entry to the settled function and, once it has it, drops the
// entry's body and object: the settled function wrote what it needed.
func (p *Planner) settle(w *work) {
	if w.settled || p.settled == nil || p.err != nil {
		return
	}
	w.settled = true
	if err := p.settled(&w.entry); err != nil {
		p.err = err
		return
	}
	w.m.DropContent()
	w.src, w.obj, w.final, w.entry.Object, w.entry.Mutation = nil, nil, nil, nil, nil
}

// settleShared is settle for the rewrite that runs on every core: one entry at a time
// reaches the settled function, in no particular order. With a spill, the entry's plan.json
// form goes there too (rejected entries stay), and the work keeps only what the checks of
// the whole plan read of it; the warnings the scope check gives it later are kept beside
// (Planner.lateWarnings).
func (p *Planner) settleShared(w *work) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settle(w)
	if p.spill == nil || !w.settled || p.err != nil || w.entry.Disposition == routing.Rejected {
		return
	}
	s, err := p.spill.Add(&w.entry, w.m.Class, w.m.Path)
	if err != nil {
		p.err = err
		return
	}
	p.late = append(p.late, s)
	w.spilledLate = len(p.late)
	w.entry.Changes, w.entry.Warnings, w.entry.Transforms, w.entry.Reason = nil, nil, nil, ""
}

// spilledJSON returns the plan.json form of the i-th spilled entry, with the warnings it
// gained after it was spilled.
func (p *Planner) spilledJSON(r *plans.SpillReader, i int) ([]byte, error) {
	js, err := r.Entry(p.spilled[i])
	if err != nil || len(p.lateWarnings[i]) == 0 {
		return js, err
	}
	var e plans.Entry
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber() // the values of its changes come back as they were written
	if err := d.Decode(&e); err != nil {
		return nil, fmt.Errorf("%s: %w", p.spilled[i].Path, err)
	}
	e.Warnings = append(e.Warnings, p.lateWarnings[i]...)
	return plans.EntryJSON(&e)
}

// Err returns the first error of the settled function; the planner settles nothing after it.
func (p *Planner) Err() error { return p.err }

// Plan runs the stages that read the whole plan and returns it; with a settled function,
// it settles every entry Add did not. Entries keep the source directory's order whatever
// order they were added in. The entries of a spill (SpillTo) are read back into the plan;
// WritePlan writes them without holding them.
func (p *Planner) Plan() *plans.Plan {
	plan, order := p.complete()
	if len(p.spilled) == 0 || p.err != nil {
		return plan
	}
	kept := plan.Entries
	plan.Entries = make([]plans.Entry, 0, len(order))
	r := plans.NewSpillReader(p.spillFrom)
	for _, ref := range order {
		if ref >= 0 {
			plan.Entries = append(plan.Entries, kept[ref])
			continue
		}
		s := p.spilled[-ref-1]
		js, err := p.spilledJSON(r, -ref-1)
		var e plans.Entry
		if err == nil {
			err = json.Unmarshal(js, &e)
		}
		if err != nil {
			p.err = fmt.Errorf("%s: %w", s.Path, err)
			return plan
		}
		e.SourcePath = s.Path
		plan.Entries = append(plan.Entries, e)
	}
	return plan
}

// WritePlan runs the stages that read the whole plan, as Plan does, and writes its plan.json
// to w (WritePlanJSON's document), reading the entries of a spill back one at a time. It
// returns the plan without the spilled entries: its Entries are the others, in order (every
// rejected entry among them), its Summary counts them all.
func (p *Planner) WritePlan(w io.Writer) (*plans.Plan, error) {
	plan, order := p.complete()
	if p.err != nil {
		return nil, p.err
	}
	r := plans.NewSpillReader(p.spillFrom)
	err := plans.WriteEntries(w, plan, len(order), func(i int) ([]byte, error) {
		if ref := order[i]; ref >= 0 {
			return plans.EntryJSON(&plan.Entries[ref])
		}
		return p.spilledJSON(r, -order[i]-1)
	})
	return plan, err
}

// complete runs the stages that read the whole plan and settles what Add did not. It returns
// the plan of the entries in memory and the order of all of them: an index into the plan's
// Entries, or -(i+1) for the i-th spilled entry.
func (p *Planner) complete() (*plans.Plan, []int) {
	e, works := p.e, p.works
	if p.spill != nil && p.err == nil {
		p.err = p.spill.Flush()
	}
	if p.settled != nil {
		// A streaming reader adds mutations in the order it meets them.
		slices.SortStableFunc(works, func(a, b *work) int { return planOrder(a.m.Class, a.m.Path, b.m.Class, b.m.Path) })
		slices.SortStableFunc(p.spilled, func(a, b plans.Spilled) int { return planOrder(a.Class, a.Path, b.Class, b.Path) })
	}
	read := len(works) // the works the reader added; the stages below add some
	e.placeGuestSubjects(works)
	works = append(works, e.placeGuestIdentities(works)...)
	works = append(works, e.addedWorks(works)...)
	works = append(works, e.guestNamespaces(works)...)
	places := &placements{index: e.checkCollisions(works)}
	writes := make([]check.Write, len(works))
	for i, w := range works {
		writes[i] = w
	}
	// Each entry's rewrite and checks read the plan-wide placement and change only the entry:
	// they run on every core. An entry the token check does not read is finished as soon as
	// it is rewritten, so that the plan never holds the rewritten trees of all its objects.
	waits := check.WaitsForTokens(writes)
	eachWork(works, func(w *work) {
		if w.entry.Disposition == routing.Apply && !w.finished {
			e.rewrite(w, places)
		}
		if !w.finished && !waits(w) {
			e.finish(w)
			if p.settled != nil && !readsSourceLater(w) {
				// Nothing reads the operator's object of this entry again (a settled
				// function drops it when the entry is settled): it goes now.
				w.m.DropContent()
				w.src, w.obj = nil, nil
				if e.HCPNamespace == "" || w.facts != nil || !scope.Reads(&w.entry, e.HCPNamespace) {
					// Nor its final object: the scope check reads its facts, the other
					// checks of the whole plan read only the entries that wait for the
					// token check or are RBAC's. It is settled now, so that the plan never
					// holds the final objects of all its entries.
					p.settleShared(w)
				}
			}
		}
	})
	e.checker.Tokens(writes, p.written)
	eachWork(works, func(w *work) {
		if !w.finished {
			e.finish(w)
		}
	})
	e.checker.Plan(writes, p.written, p.writtenRoles(writes))
	plan := &plans.Plan{Topology: e.Topology, Summary: p.spillSummary, Entries: make([]plans.Entry, 0, len(works)), GuestIdentities: guestIdentities(works)}
	if e.Policy != nil {
		plan.RBAC = e.Policy.RBAC
	}
	for _, w := range works {
		plan.Summary.Add(w.entry.Disposition)
	}
	if e.HCPNamespace != "" {
		draft := &plans.Plan{Entries: make([]plans.Entry, 0, len(works))}
		facts := make([]*scope.Facts, len(works))
		for i, w := range works {
			draft.Entries = append(draft.Entries, w.entry)
			facts[i], w.facts = w.facts, nil
		}
		for _, v := range scope.CheckFacts(draft, facts, e.HCPNamespace, e.Discovery) {
			works[v.Entry].entry.Warnings = append(works[v.Entry].entry.Warnings, scope.RuleCheck+": "+v.Message)
		}
	}
	if p.spill != nil && p.err == nil {
		p.err = p.spill.Flush() // what the rewrite spilled
	}
	order := make([]int, 0, len(works)+len(p.spilled))
	s, early := 0, len(p.spilled)
	for i, w := range works {
		// The spilled entries go among the ones the reader added, in the directory's order,
		// and before those the stages added.
		for ; s < early && (i >= read || planOrder(p.spilled[s].Class, p.spilled[s].Path, w.m.Class, w.m.Path) < 0); s++ {
			order = append(order, -(s + 1))
		}
		works[i] = nil // the entry is in the plan now: let the work go
		if w.spilledLate > 0 {
			// Spilled by the plan-wide rewrite: it goes in its place, and what the scope
			// check warned of it since beside it.
			at := early + w.spilledLate - 1
			if len(w.entry.Warnings) > 0 {
				if p.lateWarnings == nil {
					p.lateWarnings = map[int][]string{}
				}
				p.lateWarnings[at] = w.entry.Warnings
			}
			order = append(order, -(at + 1))
			continue
		}
		p.settle(w)
		plan.Entries = append(plan.Entries, w.entry)
		order = append(order, len(plan.Entries)-1)
	}
	for ; s < early; s++ {
		order = append(order, -(s + 1))
	}
	p.spilled = append(p.spilled, p.late...)
	p.late = nil
	return plan, order
}

// readsSourceLater reports whether a check of the whole plan reads the operator's object of
// a finished entry the token check does not wait for: the RBAC checks read a binding's
// roleRef as the operator wrote it.
func readsSourceLater(w *work) bool {
	if w.entry.Source.Group == policy.GroupRBAC || w.entry.Target.Group == policy.GroupRBAC {
		return true
	}
	return w.entry.Object != nil && w.entry.Object.GroupVersionKind().Group == policy.GroupRBAC
}

// AddControllerResults adds the Deletes recovered (recovery.Rule) from the error messages of
// res and from the status conditions of the mutations added before, after every mutation of
// the output directory res came with: its entries sort after the mutations of their class.
// Engine.Plan calls it with the directory's controller-results.yaml; a streaming reader calls
// it once, after contract.WalkOutputDir returned the document, and before Plan or
// WritePlan. Each object is recovered once, from the first error that names it, at most
// contract.MaxRefusedDeletes in all.
func (p *Planner) AddControllerResults(res *contract.ControllerResults) {
	added := false
	for _, d := range p.recovery.Refusals(res) {
		p.add(p.e.recoverDelete(d))
		added = true
	}
	if added && p.settled == nil {
		// Planning in memory keeps the works in the order they came: put the recovered
		// ones in plan order, as a streaming planner's complete does.
		slices.SortStableFunc(p.works, func(a, b *work) int { return planOrder(a.m.Class, a.m.Path, b.m.Class, b.m.Path) })
	}
}

// recoverDelete returns the work of one refused Delete: placed as the operator's own Delete
// would be, or dropped with a warning when it cannot be.
func (e Engine) recoverDelete(d recovery.Refused) *work {
	m, provenance, why := recovery.Delete(d, e.Discovery, e.Declared, e.Supplement)
	if why != "" {
		return &work{m: m, entry: plans.Entry{
			Operator: e.Operator, Class: m.Class, Action: m.Metadata.Action, Source: d.Identity,
			Disposition: routing.Dropped, Rule: recovery.Rule, Reason: why + ": not deleted",
			Transforms: []string{}, SourcePath: m.Path, Provenance: provenance,
			Warnings: []string{fmt.Sprintf("%s: controller %q deleted %s, which the contract cannot record; %s: not deleted", recovery.Rule, d.Controller, d.Identity, why)},
		}}
	}
	w := e.place(m)
	w.entry.Provenance = provenance
	return w
}

// planOrder orders entries as the source directory does: by class, then by path.
func planOrder(classA contract.Class, pathA string, classB contract.Class, pathB string) int {
	if c := cmp.Compare(slices.Index(contract.Classes(), classA), slices.Index(contract.Classes(), classB)); c != 0 {
		return c
	}
	return cmp.Compare(pathA, pathB)
}

// spillWork writes a settled entry's plan.json form to the spill and forgets the work: the
// plan keeps its place and summary only.
func (p *Planner) spillWork(w *work) {
	s, err := p.spill.Add(&w.entry, w.m.Class, w.m.Path)
	if err != nil {
		p.err = err
		return
	}
	p.spilled = append(p.spilled, s)
	p.spillSummary.Add(w.entry.Disposition)
}

// AddedFieldManager is the field manager of the objects a transform adds beside the
// operator's (transform.Transform.Adds): not the operator's writes, so that they do not take
// its fields.
const AddedFieldManager = "topolayer-profile"

// addedWorks returns the entries of the objects the engine's transforms add beside the apply
// entries they select (transform.Transform.Adds), each placed on the selected entry's
// cluster under the mapped name of its standalone identity, in the selected entry's class,
// and named by the transform as its rule. An object of an identity the plan writes already
// (the operator's own) is not added; one the transform cannot build, or that it would put
// in another namespace, is a rejected entry.
func (e Engine) addedWorks(works []*work) []*work {
	if len(e.composed.adds) == 0 {
		return nil
	}
	written := map[contract.Key]bool{}
	for _, w := range works {
		written[w.entry.Source.Key()] = true
	}
	var out []*work
	for _, w := range works {
		if w.entry.Disposition != routing.Apply || w.src == nil || w.m.Metadata.Action.IsStatus() {
			continue
		}
		var tree *yaml.RNode
		for _, t := range e.composed.adds {
			ctx := transform.Context{Source: w.object(), Cluster: w.entry.Target.Cluster, HCPNamespace: e.HCPNamespace, HostedControlPlane: e.HostedControlPlane, Operator: e.Operator}
			if !t.Selects(ctx.Source, ctx.Cluster) {
				continue
			}
			if tree == nil {
				tree = w.readTree()
			}
			obj, err := t.Adds(ctx, tree)
			if obj == nil && err == nil {
				continue
			}
			aw := e.addedWork(w, t.Name, obj, err)
			k := aw.entry.Source.Key()
			if aw.entry.Disposition == routing.Apply && written[k] {
				continue // the plan's own object of that identity wins
			}
			written[k] = true
			out = append(out, aw)
		}
	}
	return out
}

// addedWork is the entry of obj, which transform rule adds beside w's object (err: why it
// could not).
func (e Engine) addedWork(w *work, rule string, obj *yaml.RNode, err error) *work {
	m := &contract.Mutation{Class: w.entry.Class}
	m.Metadata.Action, m.Metadata.FieldManager = contract.ActionApply, AddedFieldManager
	aw := &work{m: m, entry: plans.Entry{
		Operator: e.Operator, Class: w.entry.Class, Action: m.Metadata.Action, Source: w.entry.Source,
		Disposition: routing.Apply, Rule: rule,
		Reason:     fmt.Sprintf("added beside %s by %s", w.entry.Source, rule),
		Transforms: []string{}, Warnings: []string{},
	}}
	if err != nil {
		return aw.reject(rule, err.Error())
	}
	gvk := schema.FromAPIVersionAndKind(obj.GetApiVersion(), obj.GetKind())
	resource, ok := e.Discovery.ResourceFor(gvk)
	if !ok {
		return aw.reject(rule, fmt.Sprintf("it adds a %s, a kind discovery does not know", gvk))
	}
	id := contract.Identity{Group: gvk.Group, Version: gvk.Version, Resource: resource, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	aw.entry.Source = id
	m.Metadata.SetIdentity(id)
	switch {
	case id.Name == "":
		return aw.reject(rule, fmt.Sprintf("it adds a %s without a name", gvk.Kind))
	case id.Namespace != w.entry.Source.Namespace:
		return aw.reject(rule, fmt.Sprintf("it adds %s, outside the namespace of %s", id, w.entry.Source))
	}
	aw.obj = obj
	if aw.src = yamlnode.Unstructured(obj); aw.src == nil {
		return aw.reject(rule, "the added object is not an object")
	}
	m.Object = aw.src
	target, err := e.Names.ToTarget(w.entry.Target.Cluster, id)
	if err != nil {
		return aw.reject(plans.RuleNameMapping, err.Error())
	}
	aw.entry.Target = plans.Target{Cluster: w.entry.Target.Cluster, Identity: target}
	return aw
}
