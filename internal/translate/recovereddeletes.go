package translate

import (
	"fmt"
	"hash/maphash"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// RuleRecoveredDelete names the stage that recovers the Deletes the contract cannot record:
// the manifest client refuses the Delete of every namespaced object (spec/mom-format.md §2.5:
// its DeleteOptions carry no namespace), so an operator that deletes a copy whose source is
// gone (CAO's resource syncer, a removed login template) records nothing, and the refusal
// comes back to the controller as an error (contract.ParseRefusedDeletes finds it). A
// controller reports it in controller-results.yaml when it returns the error, or in a
// condition of its operator's status when it reports its errors there (library-go's resource
// syncer sets ResourceSyncControllerDegraded and returns nil): the stage reads both, the
// latter only in the server-side applies of status (ApplyStatus), where each controller
// writes its own conditions of this run, and only in conditions whose status is True.
//
// Each refusal becomes a Delete mutation of the controller, placed as a Delete the operator
// recorded would be: the class of the operator's declared output that matches the object,
// the resource's preferred version from discovery, then the same checks, routing and renaming
// (Entry.Provenance says where it came from). A refusal is not placed, its entry dropped
// under this rule with a warning (the plan is not refused for it), when its object matches no
// declared output, when discovery does not know its resource as a namespaced one, or when a
// mutation of the same output writes the object (the run both wrote it and tried to delete
// it: its writes decide).
const RuleRecoveredDelete = "recovered-delete"

// recovery is what the planner keeps of the mutations added before AddControllerResults: the
// refusals their status conditions report, and the objects they write, as hashes of their
// keys (a few bytes each, so that a streaming planner stays bounded).
type recovery struct {
	refused []recovered
	h       maphash.Hash
	seeded  bool
	written map[uint64]struct{}
}

// recovered is one refused Delete and where it was read.
type recovered struct {
	contract.RefusedDelete
	// where says where the error was read, for the entry's provenance.
	where string
}

// note records what w tells the recovery: a write of its object, and the refusals of the
// conditions its status apply carries.
func (r *recovery) note(w *work) {
	action, src := w.m.Metadata.Action, w.entry.Source
	if action != contract.ActionDelete && src.Namespace != "" && src.Name != "" && !src.IsEvent() {
		if r.written == nil {
			r.written = map[uint64]struct{}{}
		}
		r.written[r.hash(src.Key())] = struct{}{}
	}
	if action != contract.ActionApplyStatus || w.src == nil || len(r.refused) >= contract.MaxRefusedDeletes {
		return
	}
	field, _, _ := unstructured.NestedFieldNoCopy(w.src.Object, "status", "conditions")
	conditions, _ := field.([]any)
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		status, _ := cond["status"].(string)
		message, _ := cond["message"].(string)
		if status != "True" || message == "" {
			continue
		}
		controller := w.m.Metadata.ControllerInstanceName
		if controller == "" {
			controller = w.m.Metadata.FieldManager
		}
		found := contract.ParseRefusedDeletes(controller, message)
		if len(found) == 0 {
			continue
		}
		typ, _ := cond["type"].(string)
		where := fmt.Sprintf("condition %q of %s (%s)", typ, src, w.m.Path)
		for _, d := range found {
			if len(r.refused) >= contract.MaxRefusedDeletes {
				return
			}
			r.refused = append(r.refused, recovered{RefusedDelete: d, where: where})
		}
	}
}

// hash hashes an object's key, its fields apart (a 0 byte cannot be in a name).
func (r *recovery) hash(k contract.Key) uint64 {
	if !r.seeded {
		r.h.SetSeed(maphash.MakeSeed())
		r.seeded = true
	}
	r.h.Reset()
	for _, s := range [...]string{k.Group, k.Resource, k.Namespace, k.Name, k.GenerateName} {
		r.h.WriteString(s)
		r.h.WriteByte(0)
	}
	return r.h.Sum64()
}

// AddControllerResults adds the Deletes recovered (RuleRecoveredDelete) from the error
// messages of res and from the status conditions of the mutations added before, after every
// mutation of the output directory res came with: its entries sort after the mutations of
// their class. Engine.Plan calls it with the directory's controller-results.yaml; a
// streaming reader calls it once, after contract.WalkOutputDir returned the document, and
// before Plan or WritePlan. Each object is recovered once, from the first error that names
// it, at most contract.MaxRefusedDeletes in all.
func (p *Planner) AddControllerResults(res *contract.ControllerResults) {
	var all []recovered
	for _, d := range res.RefusedDeletes() {
		all = append(all, recovered{RefusedDelete: d, where: contract.ControllerResultsFile})
	}
	all = append(all, p.recovery.refused...)
	p.recovery.refused = nil
	seen := map[contract.Key]bool{}
	added := false
	for _, d := range all {
		k := d.Identity.Key()
		if seen[k] || len(seen) >= contract.MaxRefusedDeletes {
			continue
		}
		seen[k] = true
		_, written := p.recovery.written[p.recovery.hash(k)]
		p.add(p.e.recoverDelete(d, written))
		added = true
	}
	if added && p.settled == nil {
		// Planning in memory keeps the works in the order they came: put the recovered
		// ones in plan order, as a streaming planner's complete does.
		slices.SortStableFunc(p.works, func(a, b *work) int { return planOrder(a.m.Class, a.m.Path, b.m.Class, b.m.Path) })
	}
}

// recoverDelete returns the work of one refused Delete: placed as the operator's own Delete
// would be, or dropped with a warning when it cannot be; written says a mutation of the same
// output writes the object.
func (e Engine) recoverDelete(d recovered, written bool) *work {
	id := d.Identity
	provenance := fmt.Sprintf("recovered from the error of controller %q in %s: the contract cannot record the Delete of a namespaced object (spec §2.5)", d.Controller, d.where)
	m := &contract.Mutation{
		Class: contract.ClassUnspecified,
		Metadata: contract.Metadata{
			Action:                 contract.ActionDelete,
			ControllerInstanceName: d.Controller,
			Namespace:              id.Namespace,
			Name:                   id.Name,
			ResourceType:           contract.ResourceType{Group: id.Group, Resource: id.Resource},
		},
		Path: contract.ControllerResultsFile,
	}
	gr := id.GroupResource()
	version, known := e.Discovery.PreferredVersion(gr)
	namespaced, _ := e.Discovery.Namespaced(gr)
	classes := e.Declared.ClassesOf(id)
	if len(classes) == 0 {
		classes = e.Supplement.ClassesOf(id)
	}
	var why string
	switch {
	case !known || !namespaced:
		why = fmt.Sprintf("discovery does not know %s as a namespaced resource", gr)
	case len(classes) == 0:
		why = fmt.Sprintf("%s matches no output the operator declares", id)
	case written:
		why = fmt.Sprintf("a mutation of the same output writes %s", id)
	}
	if why != "" {
		return &work{m: m, entry: plans.Entry{
			Operator: e.Operator, Class: m.Class, Action: m.Metadata.Action, Source: id,
			Disposition: routing.Dropped, Rule: RuleRecoveredDelete, Reason: why + ": not deleted",
			Transforms: []string{}, SourcePath: m.Path, Provenance: provenance,
			Warnings: []string{fmt.Sprintf("%s: controller %q deleted %s, which the contract cannot record; %s: not deleted", RuleRecoveredDelete, d.Controller, id, why)},
		}}
	}
	m.Class = classes[0]
	m.Metadata.ResourceType.Version = version
	m.Body = []byte("apiVersion: " + gr.WithVersion(version).GroupVersion().String() + "\nkind: DeleteOptions\n")
	w := e.place(m)
	w.entry.Provenance = provenance
	return w
}
