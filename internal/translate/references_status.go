package translate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/references"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// ByStatusReferences rewrites the entries of references.Statuses (Change.By).
const ByStatusReferences = "status-references"

// rewriteStatusReferences rewrites, with r, the entries of obj's references.Statuses that name
// an object the topology places, on the referrer's cluster, under another identity: an
// object of the plan, or one the operator declares in a class placed there. A Namespace
// stays as it is: the simulated namespace keeps its standalone name in what the operator
// reports. Entries naming objects of other clusters are left as they are. obj is in
// standalone form; each change is passed to record.
func (e Engine) rewriteStatusReferences(obj *yaml.RNode, r *renamer, record func([]plans.Change)) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	lists := references.StatusLists(obj, schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()})
	for _, path := range slices.Sorted(maps.Keys(lists)) {
		for _, s := range references.StatusEntries(lists[path]) {
			i := s.Index
			if s.ID.IsNamespace() {
				continue
			}
			target, ok := r.statusTarget(s.ID)
			if !ok || (target.Group == s.ID.Group && target.Resource == s.ID.Resource && target.Namespace == s.ID.Namespace && target.Name == s.ID.Name) {
				continue
			}
			if err := references.SetStatusEntry(s.Node, target); err != nil {
				return fmt.Errorf("%s/%d: %w", path, i, err)
			}
			// One change per field, as diffNodes records the reference table's.
			var changes []plans.Change
			for _, f := range [][3]string{{"group", s.ID.Group, target.Group}, {"name", s.ID.Name, target.Name}, {"namespace", s.ID.Namespace, target.Namespace}, {"resource", s.ID.Resource, target.Resource}} {
				if f[1] == f[2] {
					continue
				}
				c := plans.Change{Path: path + "/" + strconv.Itoa(i) + "/" + f[0], By: ByStatusReferences, Kind: plans.ChangeReference}
				if f[1] != "" || f[0] != "namespace" {
					c.From = f[1]
				}
				if f[2] != "" || f[0] != "namespace" {
					c.To = f[2]
				}
				changes = append(changes, c)
			}
			record(changes)
		}
	}
	return nil
}

// statusTarget returns where the object a status entry names lands, when it lands on the
// referrer's cluster: as the plan places it, else as the routing table would place it in a
// class the operator declares it in (without declarations: any namespaced object of a
// namespace the plan simulates).
func (r *renamer) statusTarget(id contract.Identity) (contract.Identity, bool) {
	if p, ok := r.index[keyOf("", id)]; ok {
		return p.target, p.cluster == r.from
	}
	if r.from != routing.ClusterManagement {
		return contract.Identity{}, false
	}
	e := r.engine
	if e.Declared == nil && e.Supplement == nil {
		if id.Namespace == "" || !r.simulatesNamespace(id.Namespace) {
			return contract.Identity{}, false
		}
	} else if !e.declaredOn(r.from, id) {
		return contract.Identity{}, false
	}
	target, err := e.Names.ToTarget(r.from, id)
	if err != nil {
		r.warn(fmt.Sprintf("status names %s, which cannot be mapped: %v", id, err))
		return contract.Identity{}, false
	}
	return target, true
}

// declaredOn says whether the operator declares id (Declared or Supplement) in a class the
// routing table places on cluster.
func (e Engine) declaredOn(cluster string, id contract.Identity) bool {
	for _, c := range []contract.Class{contract.ClassConfiguration, contract.ClassManagement, contract.ClassUserWorkload} {
		if !(e.Declared != nil && e.Declared.ForClass(c).Matches(id)) && !(e.Supplement != nil && e.Supplement.ForClass(c).Matches(id)) {
			continue
		}
		if d := e.Router.Route(routing.Object{Class: c, Identity: id}); d.Disposition == routing.Apply && d.Cluster == cluster {
			return true
		}
	}
	return false
}

// statusReferences maps back the entries rewriteStatusReferences rewrote, in obj found on
// the target: entries in the namespace ns of obj, or of a shadow group.
func (r *inverseRenamer) statusReferences(obj *yaml.RNode, ns string) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if original, ok := namespaces.IsShadowGroup(gk.Group); ok {
		gk.Group = original
	}
	lists := references.StatusLists(obj, gk)
	for _, path := range slices.Sorted(maps.Keys(lists)) {
		for _, s := range references.StatusEntries(lists[path]) {
			i := s.Index
			if s.ID.Namespace == "" || s.ID.Namespace != ns || s.ID.IsNamespace() {
				continue
			}
			src, err := r.inv.Names.ToSource(r.cluster, s.ID, nil)
			if err != nil {
				r.warn(fmt.Sprintf("%s/%d: %s cannot be mapped back: %v", path, i, s.ID, err))
				continue
			}
			if err := references.SetStatusEntry(s.Node, src); err != nil {
				return fmt.Errorf("%s/%d: %w", path, i, err)
			}
		}
	}
	return nil
}
