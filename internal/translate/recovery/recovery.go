package recovery

import (
	"fmt"
	"hash/maphash"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
)

// Rule names the stage that recovers the Deletes the contract cannot record: the manifest
// client refuses the Delete of every namespaced object (spec/mom-format.md §2.5: its
// DeleteOptions carry no namespace), so an operator that deletes a copy whose source is gone
// (CAO's resource syncer, a removed login template) records nothing, and the refusal comes
// back to the controller as an error (contract.ParseRefusedDeletes finds it). A controller
// reports it in controller-results.yaml when it returns the error, or in a condition of its
// operator's status when it reports its errors there (library-go's resource syncer sets
// ResourceSyncControllerDegraded and returns nil): the stage reads both, the latter only in
// the server-side applies of status (ApplyStatus), where each controller writes its own
// conditions of this run, and only in conditions whose status is True.
//
// Each refusal becomes a Delete mutation of the controller, placed as a Delete the operator
// recorded would be: the class of the operator's declared output that matches the object,
// the resource's preferred version from discovery, then the same checks, routing and renaming
// (the entry's Provenance says where it came from). A refusal is not placed, its entry
// dropped under this rule with a warning (the plan is not refused for it), when its object
// matches no declared output, when discovery does not know its resource as a namespaced one,
// or when a mutation of the same output writes the object (the run both wrote it and tried to
// delete it: its writes decide).
const Rule = "recovered-delete"

// Log is what a planner keeps of the mutations it added before the controller results: the
// refusals their status conditions report, and the objects they write, as hashes of their
// keys (a few bytes each, so that a streaming planner stays bounded).
type Log struct {
	refused []Refused
	h       maphash.Hash
	seeded  bool
	written map[uint64]struct{}
}

// Refused is one refused Delete, where it was read, and whether a mutation of the same
// output writes its object.
type Refused struct {
	contract.RefusedDelete
	// Where says where the error was read, for the entry's provenance.
	Where string
	// Written says a mutation of the same output writes the object.
	Written bool
}

// Note records what a mutation tells the log: a write of its object (id), and the refusals
// of the conditions its status apply carries (obj, the object it applies; nil for patches
// and deletes).
func (r *Log) Note(m *contract.Mutation, id contract.Identity, obj *unstructured.Unstructured) {
	action := m.Metadata.Action
	if action != contract.ActionDelete && id.Namespace != "" && id.Name != "" && !id.IsEvent() {
		if r.written == nil {
			r.written = map[uint64]struct{}{}
		}
		r.written[r.hash(id.Key())] = struct{}{}
	}
	if action != contract.ActionApplyStatus || obj == nil || len(r.refused) >= contract.MaxRefusedDeletes {
		return
	}
	field, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "conditions")
	conditions, _ := field.([]any)
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		status, _ := cond["status"].(string)
		message, _ := cond["message"].(string)
		if status != "True" || message == "" {
			continue
		}
		controller := m.Metadata.ControllerInstanceName
		if controller == "" {
			controller = m.Metadata.FieldManager
		}
		found := contract.ParseRefusedDeletes(controller, message)
		if len(found) == 0 {
			continue
		}
		typ, _ := cond["type"].(string)
		where := fmt.Sprintf("condition %q of %s (%s)", typ, id, m.Path)
		for _, d := range found {
			if len(r.refused) >= contract.MaxRefusedDeletes {
				return
			}
			r.refused = append(r.refused, Refused{RefusedDelete: d, Where: where})
		}
	}
}

// hash hashes an object's key, its fields apart (a 0 byte cannot be in a name).
func (r *Log) hash(k contract.Key) uint64 {
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

// Refusals returns the Deletes to recover: those of res's error messages, then those of the
// status conditions noted before, each object once (from the first error that names it), at
// most contract.MaxRefusedDeletes in all. The log forgets the conditions' refusals.
func (r *Log) Refusals(res *contract.ControllerResults) []Refused {
	var all []Refused
	for _, d := range res.RefusedDeletes() {
		all = append(all, Refused{RefusedDelete: d, Where: contract.ControllerResultsFile})
	}
	all = append(all, r.refused...)
	r.refused = nil
	seen := map[contract.Key]bool{}
	var out []Refused
	for _, d := range all {
		k := d.Identity.Key()
		if seen[k] || len(seen) >= contract.MaxRefusedDeletes {
			continue
		}
		seen[k] = true
		_, d.Written = r.written[r.hash(k)]
		out = append(out, d)
	}
	return out
}

// Delete returns the Delete mutation of a refusal, in the class of the operator's declared
// output (declared, else the configuration's supplement) that matches its object and at the
// resource's preferred version; or why it cannot be placed. provenance says where it came
// from.
func Delete(d Refused, discovery *contract.Discovery, declared, supplement *contract.OutputResources) (m *contract.Mutation, provenance, why string) {
	id := d.Identity
	provenance = fmt.Sprintf("recovered from the error of controller %q in %s: the contract cannot record the Delete of a namespaced object (spec §2.5)", d.Controller, d.Where)
	m = &contract.Mutation{
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
	version, known := discovery.PreferredVersion(gr)
	namespaced, _ := discovery.Namespaced(gr)
	classes := declared.ClassesOf(id)
	if len(classes) == 0 {
		classes = supplement.ClassesOf(id)
	}
	switch {
	case !known || !namespaced:
		return m, provenance, fmt.Sprintf("discovery does not know %s as a namespaced resource", gr)
	case len(classes) == 0:
		return m, provenance, fmt.Sprintf("%s matches no output the operator declares", id)
	case d.Written:
		return m, provenance, fmt.Sprintf("a mutation of the same output writes %s", id)
	}
	m.Class = classes[0]
	m.Metadata.ResourceType.Version = version
	m.Body = []byte("apiVersion: " + gr.WithVersion(version).GroupVersion().String() + "\nkind: DeleteOptions\n")
	return m, provenance, ""
}
