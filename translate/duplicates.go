package translate

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

// writeKey is what makes two mutations writes of one object by one writer. The class is
// part of it: the contract records a request under every class whose declarations match it.
type writeKey struct {
	class                      contract.Class
	action                     contract.Action
	group, resource, namespace string
	name                       string
	controller, fieldManager   string
}

// firstWrite is the first mutation of a writeKey (or of an object, for replacing writes).
type firstWrite struct {
	path, controller string
}

// writeLog remembers, while a plan is placed in output order, the first write of each object
// by each writer.
type writeLog struct {
	byWriter map[writeKey]firstWrite
	replaced map[writeKey]firstWrite // by object: controller and field manager empty
}

// check rejects w when it is a duplicate write (RuleDuplicateWrite), or warns when it
// replaces an object that another controller's whole write in the same output wrote.
func (l *writeLog) check(w *work) {
	m := w.m
	if m == nil || m.Metadata.Name == "" || w.entry.Source.IsEvent() {
		return
	}
	key := writeKey{
		class: m.Class, action: m.Metadata.Action, group: m.Metadata.ResourceType.Group, resource: m.Metadata.ResourceType.Resource,
		namespace: m.Metadata.Namespace, name: m.Metadata.Name,
		controller: m.Metadata.ControllerInstanceName, fieldManager: m.Metadata.FieldManager,
	}
	if l.byWriter == nil {
		l.byWriter, l.replaced = map[writeKey]firstWrite{}, map[writeKey]firstWrite{}
	}
	if first, ok := l.byWriter[key]; ok {
		w.reject(RuleDuplicateWrite, fmt.Sprintf("%s %s is written twice in this output by %s: %s and %s differ; one writer may say one thing about an object per run",
			m.Metadata.Action, w.entry.Source, writerName(key.controller, key.fieldManager), first.path, m.Path))
		return
	}
	l.byWriter[key] = firstWrite{path: m.Path, controller: key.controller}
	if m.Metadata.Action != contract.ActionCreate && m.Metadata.Action != contract.ActionUpdate {
		return // server-side applies of several managers merge; patches and deletes are steps
	}
	object := key
	object.action, object.controller, object.fieldManager = "", "", ""
	if first, ok := l.replaced[object]; ok && first.controller != key.controller {
		w.entry.Warnings = append(w.entry.Warnings, fmt.Sprintf("%s: %s replaces the whole object that %s wrote earlier in this output (%s); applied in plan order, the later write wins",
			RuleDuplicateWrite, writerName(key.controller, key.fieldManager), writerName(first.controller, ""), first.path))
		return
	}
	l.replaced[object] = firstWrite{path: m.Path, controller: key.controller}
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
