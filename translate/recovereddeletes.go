package translate

import (
	"fmt"
	"slices"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// RuleRecoveredDelete names the stage that recovers the Deletes the contract cannot record:
// the manifest client refuses the Delete of every namespaced object (spec/mom-format.md §2.5:
// its DeleteOptions carry no namespace), so an operator that deletes a copy whose source is
// gone (CAO's resource syncer, a removed login template) records nothing, and the refusal
// comes back to the controller as an error that controller-results.yaml holds
// (contract.ParseRefusedDeletes). Each refusal becomes a Delete mutation of the controller,
// placed as a Delete the operator recorded would be: the class of the operator's declared
// output that matches the object, the resource's preferred version from discovery, then the
// same checks, routing and renaming (Entry.Provenance says where it came from). A refusal
// whose object matches no declared output, or whose resource discovery does not know as a
// namespaced one, is not placed: its entry is dropped under this rule with a warning, and the
// plan is not refused for it.
const RuleRecoveredDelete = "recovered-delete"

// AddControllerResults adds the Deletes recovered from the error messages of res
// (RuleRecoveredDelete), after every mutation of the output directory res came with: its
// entries sort after the mutations of their class. Engine.Plan calls it with the directory's
// controller-results.yaml; a streaming reader calls it once, after contract.WalkOutputDir
// returned the document, and before Plan or WritePlan. A nil document recovers nothing.
func (p *Planner) AddControllerResults(res *contract.ControllerResults) {
	added := false
	for _, d := range res.RefusedDeletes() {
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
func (e Engine) recoverDelete(d contract.RefusedDelete) *work {
	id := d.Identity
	provenance := fmt.Sprintf("recovered from the error of controller %q in %s: the contract cannot record the Delete of a namespaced object (spec §2.5)", d.Controller, contract.ControllerResultsFile)
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
	}
	if why != "" {
		w := &work{m: m, entry: Entry{
			Operator: e.Operator, Class: m.Class, Action: m.Metadata.Action, Source: id,
			Disposition: routing.Dropped, Rule: RuleRecoveredDelete,
			Reason:     why + ": not deleted",
			Transforms: []string{}, SourcePath: m.Path, Provenance: provenance,
			Warnings: []string{fmt.Sprintf("%s: controller %q deleted %s, which the contract cannot record; %s: nothing deletes it", RuleRecoveredDelete, d.Controller, id, why)},
		}}
		return w
	}
	m.Class = classes[0]
	m.Metadata.ResourceType.Version = version
	gv := gr.WithVersion(version).GroupVersion()
	m.Body = []byte("apiVersion: " + gv.String() + "\nkind: DeleteOptions\n")
	w := e.place(m)
	w.entry.Provenance = provenance
	return w
}
