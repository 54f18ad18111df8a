package parity

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// Object is one object's final state on one side of the comparison.
type Object struct {
	// Source is the object's standalone identity: the key both sides are matched by.
	Source contract.Identity `json:"source"`
	// Cluster is the cluster the object is on: "cluster" (standalone), "management" or "guest".
	Cluster string `json:"cluster"`
	// Identity is the object's identity on that cluster.
	Identity contract.Identity `json:"identity"`
	// Deleted is true when the last word on the object was a Delete.
	Deleted bool `json:"deleted,omitempty"`
	// Body is the object, as JSON values; nil when deleted.
	Body map[string]any `json:"body,omitempty"`
	// PendingPatches are Patch and PatchStatus bodies that could not be applied offline
	// (their base is not known without the live object), in the order they were folded.
	PendingPatches []string `json:"pendingPatches,omitempty"`
	// Actions are the actions of the mutations folded into it, in fold order: what a
	// writer of the object decides by (the management target owns what it writes whole).
	Actions []contract.Action `json:"-"`
}

// foldOrder is the order in which the mutations of one object are folded into its final
// state. An output directory records requests, not their order: the lifecycle order is the
// one a controller issues them in, create first and delete last.
var foldOrder = map[contract.Action]int{
	contract.ActionCreate:       0,
	contract.ActionUpdate:       1,
	contract.ActionApply:        2,
	contract.ActionPatch:        3,
	contract.ActionUpdateStatus: 4,
	contract.ActionApplyStatus:  5,
	contract.ActionPatchStatus:  6,
	contract.ActionDelete:       7,
}

// FinalState folds the apply entries of a plan into one Object per target object: the state
// the mutations establish, starting from nothing. Entries of one object are folded in
// lifecycle order (Create, Update, Apply, Patch, the status actions, Delete), each action's
// entries in plan order. Create and Update replace the object (keeping a status the body
// does not carry), Apply merges it (maps merge; lists of objects that all carry a "name",
// or all a "type", merge by that key; other lists are replaced), the status actions do the
// same to status only, merge and strategic-merge patches are applied as JSON merge patches
// (no schema offline), JSON patches as such, and Delete removes the object. A patch that
// cannot be applied is kept, as its body, in PendingPatches. Entries other than apply, and
// entries without a mutation, are skipped. The result is sorted by cluster and identity.
func FinalState(p *plans.Plan) ([]Object, error) {
	type key struct {
		cluster string
		id      objectKey
	}
	groups := map[key][]plans.Entry{}
	var order []key
	for _, e := range p.Entries {
		if e.Disposition != routing.Apply || e.Mutation == nil {
			continue
		}
		k := key{e.Target.Cluster, keyOf(e.Target.Identity)}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
	}
	out := make([]Object, 0, len(order))
	for _, k := range order {
		entries := groups[k]
		slices.SortStableFunc(entries, func(a, b plans.Entry) int {
			return cmp.Compare(foldOrder[a.Action], foldOrder[b.Action])
		})
		obj := Object{Source: entries[0].Source, Cluster: k.cluster, Identity: entries[0].Target.Identity}
		for _, e := range entries {
			if err := obj.fold(e.Action, e.Mutation); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", e.SourcePath, e.Target.Identity, err)
			}
		}
		out = append(out, obj)
	}
	sortObjects(out)
	return out, nil
}

func sortObjects(objs []Object) {
	slices.SortStableFunc(objs, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), compareKeys(keyOf(a.Identity), keyOf(b.Identity)))
	})
}

// fold applies one mutation to the object's state.
func (o *Object) fold(action contract.Action, m *contract.Mutation) error {
	o.Actions = append(o.Actions, action)
	switch action {
	case contract.ActionDelete:
		o.Deleted, o.Body = true, nil
		return nil
	case contract.ActionPatch, contract.ActionPatchStatus:
		return o.patch(m)
	}
	data, err := m.Bytes()
	if err != nil {
		return err
	}
	var body map[string]any
	if err := sigsyaml.Unmarshal(data, &body); err != nil {
		return fmt.Errorf("parse body: %w", err)
	}
	if body == nil {
		return nil
	}
	o.Deleted = false
	if o.Body == nil {
		o.Body = skeleton(body)
	}
	switch action {
	case contract.ActionCreate, contract.ActionUpdate:
		status, hadStatus := o.Body["status"]
		o.Body = body
		if _, has := body["status"]; !has && hadStatus {
			o.Body["status"] = status
		}
	case contract.ActionApply:
		o.Body = merge(o.Body, body).(map[string]any)
	case contract.ActionUpdateStatus:
		setOrDelete(o.Body, "status", body["status"])
	case contract.ActionApplyStatus:
		if s, ok := body["status"]; ok {
			o.Body["status"] = merge(o.Body["status"], s)
		}
	}
	return nil
}

// skeleton keeps what identifies an object: apiVersion, kind, and metadata's name,
// generateName and namespace.
func skeleton(body map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := body[k]; ok {
			out[k] = v
		}
	}
	if meta, ok := body["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for _, k := range []string{"name", "generateName", "namespace"} {
			if v, ok := meta[k]; ok {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}

func setOrDelete(m map[string]any, k string, v any) {
	if v == nil {
		delete(m, k)
		return
	}
	m[k] = v
}

// patch applies a Patch or PatchStatus body, or keeps it pending.
func (o *Object) patch(m *contract.Mutation) error {
	pending := func() error {
		o.PendingPatches = append(o.PendingPatches, string(m.Body))
		return nil
	}
	if o.Body == nil {
		return pending()
	}
	doc, err := json.Marshal(o.Body)
	if err != nil {
		return err
	}
	var patched []byte
	switch m.Metadata.PatchType {
	case contract.PatchTypeJSON:
		js, err := sigsyaml.YAMLToJSON(m.Body)
		if err != nil {
			return fmt.Errorf("parse JSON patch: %w", err)
		}
		ops, err := jsonpatch.DecodePatch(js)
		if err != nil {
			return fmt.Errorf("parse JSON patch: %w", err)
		}
		if patched, err = ops.Apply(doc); err != nil {
			return pending() // a test failed, or a path is missing: the live object decides
		}
	case contract.PatchTypeMerge, contract.PatchTypeStrategicMerge:
		if patched, err = jsonpatch.MergePatch(doc, m.Body); err != nil {
			return pending()
		}
	default:
		return pending()
	}
	var body map[string]any
	if err := json.Unmarshal(patched, &body); err != nil {
		return fmt.Errorf("patched object: %w", err)
	}
	o.Body = body
	return nil
}

// merge merges b into a the way an apply does without a schema: maps merge key by key,
// lists of objects keyed by "name" (or all by "type") merge element by element, anything
// else is replaced by b. a is not modified.
func merge(a, b any) any {
	switch bv := b.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			return bv
		}
		out := maps.Clone(av)
		for k, v := range bv {
			out[k] = merge(av[k], v)
		}
		return out
	case []any:
		av, ok := a.([]any)
		if !ok {
			return bv
		}
		for _, key := range []string{"name", "type"} {
			if keyed(av, key) && keyed(bv, key) {
				return mergeList(av, bv, key)
			}
		}
		return bv
	}
	return b
}

func keyed(list []any, key string) bool {
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m[key].(string); !ok {
			return false
		}
	}
	return true
}

func mergeList(a, b []any, key string) []any {
	out := slices.Clone(a)
	at := map[string]int{}
	for i, e := range out {
		at[e.(map[string]any)[key].(string)] = i
	}
	for _, e := range b {
		k := e.(map[string]any)[key].(string)
		if i, ok := at[k]; ok {
			out[i] = merge(out[i], e)
			continue
		}
		at[k] = len(out)
		out = append(out, e)
	}
	return out
}

// objectKey names an object regardless of version.
type objectKey struct {
	group, resource, namespace, name, generateName string
}

func keyOf(id contract.Identity) objectKey {
	return objectKey{id.Group, id.Resource, id.Namespace, id.Name, id.GenerateName}
}

func compareKeys(a, b objectKey) int {
	return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.resource, b.resource),
		cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name), cmp.Compare(a.generateName, b.generateName))
}
