package translate

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var _ Renamer = (*renamer)(nil)

// Rename answers where a referenced standalone object lands, for RewriteReferences.
func (r *renamer) Rename(ref Reference) (Renamed, bool) {
	target, _, ok := r.resolve(ref.Kind, ref.Namespace, ref.Name)
	if !ok {
		return Renamed{}, false
	}
	out := Renamed{Namespace: target.Namespace, Name: target.Name}
	if resource, _ := r.engine.Discovery.ResourceForKind(ref.Kind); resource != target.Resource {
		if kind, ok := r.engine.Discovery.KindForResource(target.GroupResource()); ok {
			out.Kind = kind
		}
	}
	return out, true
}

// rewriteReferences rewrites the references inside obj with the table of references; what the
// renamer cannot place is left as it is (and reported by the renamer where it matters).
func rewriteReferences(obj *yaml.RNode, r *renamer) error {
	_, _, err := RewriteReferences(obj, r)
	return err
}
