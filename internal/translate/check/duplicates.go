package check

import (
	"fmt"

	"github.com/topolayer/topolayer/contract"
)

// RuleDuplicateWrite rejects a mutation that writes an object a mutation before it in the
// same output already writes with the same action, as the same writer (controller and field
// manager), with another body: one controller saying two different things about one object
// in one run leaves the result to the order of two files. The entry names both files. Whole
// writes of one object by different controllers (two Updates, as the real CAO's config
// observers make) are a sequence, not a conflict: the later is kept with a warning that it
// replaces the earlier.
const RuleDuplicateWrite = "duplicate-write"

// writeKey is what makes two mutations writes of one object by one writer: the writer (or,
// for replacing writes, the object's kind) and the object's namespace as indexes into the
// log's, and the object's name. The class is part of the writer: the contract records a request under
// every class whose declarations match it. The log holds one key per object of the plan, so
// the few distinct writers and kinds are not repeated in each.
type writeKey struct {
	id, namespace uint32 // the namespace's index in the log's
	name          string
}

// writer is one writer of a plan's objects: a class, action and resource, a controller and a
// field manager; kind is the same without the action and the writer.
type (
	writer struct {
		class                    contract.Class
		action                   contract.Action
		group, resource          string
		controller, fieldManager string
	}
	kind struct {
		class           contract.Class
		group, resource string
	}
)

// firstWrite is the first mutation of a writeKey (or of an object, for replacing writes):
// its file and its writer's index.
type firstWrite struct {
	path   string
	writer uint32
}

// DuplicateWrites remembers, while a plan is placed in output order, the first write of each object
// by each writer.
type DuplicateWrites struct {
	writers    map[writer]uint32
	byID       []writer // writers by index
	kinds      map[kind]uint32
	namespaces map[string]uint32
	byWriter   map[writeKey]firstWrite
	replaced   map[writeKey]firstWrite // by object: writeKey.id is the kind's
}

// intern returns the index of v in ids, adding it.
func intern[K comparable](ids map[K]uint32, v K) uint32 {
	id, ok := ids[v]
	if !ok {
		id = uint32(len(ids))
		ids[v] = id
	}
	return id
}

// Check rejects w when it is a duplicate write (RuleDuplicateWrite), or warns when it
// replaces an object that another controller's whole write in the same output wrote.
func (l *DuplicateWrites) Check(w Write) {
	m := w.Mutation()
	if m == nil || m.Metadata.Name == "" || w.Entry().Source.IsEvent() {
		return
	}
	md := m.Metadata
	if l.byWriter == nil {
		l.writers, l.kinds, l.namespaces = map[writer]uint32{}, map[kind]uint32{}, map[string]uint32{}
		l.byWriter, l.replaced = map[writeKey]firstWrite{}, map[writeKey]firstWrite{}
	}
	by := writer{class: m.Class, action: md.Action, group: md.ResourceType.Group, resource: md.ResourceType.Resource, controller: md.ControllerInstanceName, fieldManager: md.FieldManager}
	id := intern(l.writers, by)
	if int(id) == len(l.byID) {
		l.byID = append(l.byID, by)
	}
	ns := intern(l.namespaces, md.Namespace)
	key := writeKey{id: id, namespace: ns, name: md.Name}
	if first, ok := l.byWriter[key]; ok {
		w.Reject(RuleDuplicateWrite, fmt.Sprintf("%s %s is written twice in this output by %s: %s and %s differ; one writer may say one thing about an object per run",
			md.Action, w.Entry().Source, writerName(by.controller, by.fieldManager), first.path, m.Path))
		return
	}
	l.byWriter[key] = firstWrite{path: m.Path, writer: id}
	if md.Action != contract.ActionCreate && md.Action != contract.ActionUpdate {
		return // server-side applies of several managers merge; patches and deletes are steps
	}
	object := writeKey{id: intern(l.kinds, kind{class: m.Class, group: by.group, resource: by.resource}), namespace: ns, name: md.Name}
	if first, ok := l.replaced[object]; ok && l.byID[first.writer].controller != by.controller {
		w.Entry().Warnings = append(w.Entry().Warnings, fmt.Sprintf("%s: %s replaces the whole object that %s wrote earlier in this output (%s); applied in plan order, the later write wins",
			RuleDuplicateWrite, writerName(by.controller, by.fieldManager), writerName(l.byID[first.writer].controller, ""), first.path))
		return
	}
	l.replaced[object] = firstWrite{path: m.Path, writer: id}
}

// writerName names a writer in messages.
func writerName(controller, fieldManager string) string {
	switch {
	case controller != "" && fieldManager != "":
		return fmt.Sprintf("controller %s (field manager %s)", controller, fieldManager)
	case controller != "":
		return "controller " + controller
	case fieldManager != "":
		return "field manager " + fieldManager
	}
	return "the same unnamed writer"
}
