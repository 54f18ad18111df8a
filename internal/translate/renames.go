package translate

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/references"
)

var _ references.Renamer = (*renamer)(nil)

// Rename answers where a referenced standalone object lands, for references.RewriteReferences.
func (r *renamer) Rename(ref references.Reference) (references.Renamed, bool) {
	target, _, ok := r.resolve(ref.Kind, ref.Namespace, ref.Name)
	if !ok {
		return references.Renamed{}, false
	}
	return renamedAs(r.engine.Discovery, ref.Kind, target), true
}

// renamedAs is where a reference to an object of kind lands when the object becomes
// target: its namespace and name, and its kind when target is of another resource than
// kind's (a ClusterRole placed as a Role).
func renamedAs(d *contract.Discovery, kind schema.GroupKind, target contract.Identity) references.Renamed {
	out := references.Renamed{Namespace: target.Namespace, Name: target.Name}
	if resource, _ := d.ResourceForKind(kind); resource != target.Resource {
		if k, ok := d.KindForResource(target.GroupResource()); ok {
			out.Kind = k
		}
	}
	return out
}

// rewriteReferences rewrites the references inside obj with the table of references; what the
// renamer cannot place is left as it is (and reported by the renamer where it matters).
func rewriteReferences(obj *yaml.RNode, r *renamer) error {
	_, _, err := references.RewriteReferences(obj, r)
	return err
}
