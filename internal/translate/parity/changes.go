package parity

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/namespaces"
)

// step is one change the hosted engine recorded, where it is and why.
type step struct {
	cause Cause
	path  []segment
}

// ownerAnnotation is where a transform asks the applier for the HostedControlPlane owner.
var ownerAnnotation = []segment{"metadata", "annotations", namespaces.AnnotationOwnerHCP}

// predict applies the changes recorded in the hosted entries of one object to its standalone
// body, in the order the entries are folded and the changes were made, and returns the
// predicted hosted body and the steps, each with its cause. No rule is run again: the plan
// says what changed. When the hosted object is a live one whose ownerReference to the
// HostedControlPlane the applier set from the owner annotation, the prediction does the same.
func predict(standalone, hosted map[string]any, entries []plans.Entry) (map[string]any, []step, error) {
	predicted, err := jsonCopy(standalone)
	if err != nil {
		return nil, nil, err
	}
	body, _ := predicted.(map[string]any)
	if body == nil {
		body = map[string]any{}
	}
	entries = slices.Clone(entries)
	slices.SortStableFunc(entries, func(a, b plans.Entry) int {
		return cmp.Compare(foldOrder[a.Action], foldOrder[b.Action])
	})
	var steps []step
	for _, e := range entries {
		for _, c := range e.Changes {
			to, err := jsonCopy(c.To)
			if err != nil {
				return nil, nil, err
			}
			path := pointerPath(body, yamlnode.PointerSegments(c.Path))
			if m, ok := setPath(body, path, to, c.To != nil).(map[string]any); ok {
				body = m
			}
			cause := Cause{Kind: CauseKind(c.Kind), By: c.By, Detail: c.Detail}
			if slices.Equal(path, ownerAnnotation) {
				cause = Cause{Kind: CauseOwner, By: c.By, Detail: "the applier turns annotation " + namespaces.AnnotationOwnerHCP + " into an ownerReference to the HostedControlPlane"}
			}
			steps = append(steps, step{cause: cause, path: path})
		}
	}
	if st, ok := owner(body, hosted); ok {
		steps = append(steps, st)
	}
	return body, steps, nil
}

// owner does to the predicted body what the applier does with the owner annotation when the
// hosted object is a live one that has the ownerReference: the annotation goes, the
// ownerReference to that HostedControlPlane comes.
func owner(predicted, hosted map[string]any) (step, bool) {
	name, _ := lookup(predicted, ownerAnnotation)
	if name == nil {
		return step{}, false
	}
	meta, _ := hosted["metadata"].(map[string]any)
	refs, _ := meta["ownerReferences"].([]any)
	var owners []any
	for _, ref := range refs {
		m, ok := ref.(map[string]any)
		if ok && m["kind"] == "HostedControlPlane" && m["name"] == name {
			owners = append(owners, ref)
		}
	}
	if len(owners) == 0 {
		return step{}, false // not applied yet: the annotation is what the hosted object has
	}
	pm, _ := predicted["metadata"].(map[string]any)
	annotations, _ := pm["annotations"].(map[string]any)
	delete(annotations, namespaces.AnnotationOwnerHCP)
	if len(annotations) == 0 {
		delete(pm, "annotations")
	}
	existing, _ := pm["ownerReferences"].([]any)
	pm["ownerReferences"] = append(existing, owners...)
	detail := "ownerReference to HostedControlPlane " + name.(string) + " (annotation " + namespaces.AnnotationOwnerHCP + ")"
	return step{cause: Cause{Kind: CauseOwner, By: "apply", Detail: detail}, path: []segment{"metadata", "ownerReferences"}}, true
}

// pointerPath turns the segments of a JSON pointer into a path into v: a segment that walks
// into a list is an index.
func pointerPath(v any, segments []string) []segment {
	path := make([]segment, len(segments))
	for i, s := range segments {
		path[i] = s
		switch cur := v.(type) {
		case []any:
			if n, err := strconv.Atoi(s); err == nil {
				path[i] = n
				if n < len(cur) {
					v = cur[n]
					continue
				}
			}
			v = nil
		case map[string]any:
			v = cur[s]
		default:
			v = nil
		}
	}
	return path
}

// setPath sets (or, when !has, removes) the value at path in v, creating maps on the way,
// and returns the new v.
func setPath(v any, path []segment, to any, has bool) any {
	if len(path) == 0 {
		return to
	}
	switch s := path[0].(type) {
	case int:
		l, _ := v.([]any)
		if s >= len(l) {
			if !has {
				return v
			}
			l = append(l, make([]any, s+1-len(l))...)
		}
		if len(path) == 1 && !has {
			return slices.Delete(l, s, s+1)
		}
		l[s] = setPath(l[s], path[1:], to, has)
		return l
	case string:
		m, _ := v.(map[string]any)
		if m == nil {
			if !has {
				return v
			}
			m = map[string]any{}
		}
		if len(path) == 1 && !has {
			delete(m, s)
			return m
		}
		m[s] = setPath(m[s], path[1:], to, has)
		return m
	}
	return v
}

// jsonCopy copies a value through JSON, so that numbers are what encoding/json decodes.
func jsonCopy(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(data, &out)
	return out, err
}

// explains reports whether the predicted and hosted values agree at path, by diff's rules: a
// mapping left empty where the other side has none agrees (a replayed removal of a mapping's
// last key leaves it empty).
func explains(predicted, hosted map[string]any, path []segment) bool {
	pv, pok := lookup(predicted, path)
	hv, hok := lookup(hosted, path)
	var out []change
	walkDiff(nil, pv, pok, hv, hok, &out)
	return len(out) == 0
}
