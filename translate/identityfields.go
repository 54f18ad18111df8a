package translate

import (
	"fmt"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/routing"
)

// Rule names of the checks on the fields that say what and whose an object is.
const (
	// RuleIdentityFields rejects objects whose apiVersion, kind, metadata.name,
	// metadata.namespace, metadata.generateName or metadata.ownerReferences a transform
	// changed: the plan states the target from the identity the engine gave the object, so a
	// transform that changes it would write somewhere the plan does not say. The profile's
	// own drop-owner-references is the one transform that may remove ownerReferences.
	RuleIdentityFields = "policy/identity-fields"
	// RuleOwnerReferences rejects an object that would land on the shared management cluster
	// with ownerReferences: the operator's owners are its standalone objects, not the
	// management cluster's, and an owner there ties the object's lifetime to it (or, with
	// blockOwnerDeletion, the owner's to the object). The hypershift profile strips them
	// (drop-owner-references); without the profile they are refused. The management target
	// adds the HostedControlPlane's own at apply time.
	RuleOwnerReferences = "policy/owner-references"
)

// identityFields are the JSON pointers of the fields that make an object's identity and
// ownership.
var identityFields = []string{"/apiVersion", "/kind", "/metadata/name", "/metadata/namespace", "/metadata/generateName", "/metadata/ownerReferences"}

// identityField returns the identity field a change at pointer touches ("" for none): the
// field itself, a part of it, or a whole that holds it (the object, metadata).
func identityField(pointer string) string {
	for _, f := range identityFields {
		if pointer == f || under(pointer, f) || under(f, pointer) || pointer == "" {
			return f
		}
	}
	return ""
}

// under reports whether the JSON pointer p is below the pointer above (p has above+"/" as a
// prefix).
func under(p, above string) bool {
	return len(p) > len(above) && p[len(above)] == '/' && strings.HasPrefix(p, above)
}

// dotted prints a JSON pointer as a field path: "/metadata/name" as "metadata.name".
func dotted(pointer string) string {
	if pointer == "" {
		return "(the whole object)"
	}
	return strings.Join(PointerSegments(pointer), ".")
}

// IdentityFields returns the identity fields (apiVersion, kind, metadata.name,
// metadata.namespace, metadata.generateName, metadata.ownerReferences) the patch would set or
// remove, as field paths, in the order found. A strategic-merge patch touches those it names,
// or all of them with a $patch directive at the top or in metadata, or a metadata that is not
// a mapping; a JSON 6902 operation those its path (and, for move, its from) is in or above.
func (p Patch) IdentityFields() ([]string, error) {
	var out []string
	add := func(pointer string) {
		if f := identityField(pointer); f != "" && !slices.Contains(out, dotted(f)) {
			out = append(out, dotted(f))
		}
	}
	switch {
	case p.StrategicMerge != "":
		var patch map[string]any
		if err := sigsyaml.Unmarshal([]byte(p.StrategicMerge), &patch); err != nil {
			return nil, fmt.Errorf("strategicMerge: %w", err)
		}
		if _, ok := patch["$patch"]; ok {
			add("")
		}
		for _, k := range []string{"apiVersion", "kind"} {
			if _, ok := patch[k]; ok {
				add("/" + k)
			}
		}
		if meta, ok := patch["metadata"]; ok {
			m, isMap := meta.(map[string]any)
			if !isMap {
				add("/metadata")
			}
			if _, ok := m["$patch"]; ok {
				add("/metadata")
			}
			for _, k := range []string{"name", "namespace", "generateName", "ownerReferences"} {
				if _, ok := m[k]; ok {
					add("/metadata/" + k)
				}
			}
		}
	case p.JSON6902 != "":
		js, err := sigsyaml.YAMLToJSON([]byte(p.JSON6902))
		if err != nil {
			return nil, fmt.Errorf("json6902: %w", err)
		}
		ops, err := jsonpatch.DecodePatch(js)
		if err != nil {
			return nil, fmt.Errorf("json6902: %w", err)
		}
		for i, op := range ops {
			if op.Kind() == "test" {
				continue
			}
			path, err := op.Path()
			if err != nil {
				return nil, fmt.Errorf("json6902[%d].path: %w", i, err)
			}
			add(path)
			if op.Kind() == "move" {
				if from, err := op.From(); err == nil {
					add(from)
				}
			}
		}
	}
	return out, nil
}

// removesOwnerReferences reports whether the transform named by may remove ownerReferences
// (Transform.RemovesOwnerReferences).
func (e Engine) removesOwnerReferences(by string) bool {
	for _, s := range e.Stages {
		if t, ok := s.(TransformStage); ok && t.Transform.Name == by {
			return t.Transform.RemovesOwnerReferences
		}
	}
	return false
}

// checkIdentityFields rejects an applied entry whose identity fields a transform changed
// (RuleIdentityFields), and one that lands on the management cluster with ownerReferences
// (RuleOwnerReferences). It runs with the policy, on the final object and its changes.
func (e Engine) checkIdentityFields(w *work) {
	if e.Policy == nil || w.entry.Disposition != routing.Apply {
		return
	}
	for _, c := range w.entry.Changes {
		if c.Kind != ChangeTransformed {
			continue
		}
		f := identityField(c.Path)
		if f == "" {
			continue
		}
		if f == "/metadata/ownerReferences" && c.To == nil && e.removesOwnerReferences(c.By) {
			continue
		}
		w.reject(RuleIdentityFields, fmt.Sprintf("%s: %s: transform %s changes it (%s), and the plan states the target from the identity the engine gave the object: a transform may not change what or whose an object is",
			w.entry.Source, dotted(f), c.By, dotted(c.Path)))
		return
	}
	if o := w.entry.Object; o != nil && w.entry.Target.Cluster == routing.ClusterManagement {
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "ownerReferences"); !found {
			return
		}
		w.reject(RuleOwnerReferences, fmt.Sprintf("%s: metadata.ownerReferences: the operator's owners would land on the shared management cluster (the hypershift profile's drop-owner-references strips them)", w.entry.Source))
	}
}
