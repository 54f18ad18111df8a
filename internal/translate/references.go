package translate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/references"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
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

// renamer answers, for a reference inside one object, where the referenced object lands.
type renamer struct {
	engine Engine
	index  map[objectKey]placed
	// outside remembers where the objects outside the plan that references name are
	// expected (objectKey -> outsideTarget): many objects name the same ones. nil for none.
	outside  *sync.Map
	from     string            // the referrer's target cluster
	referrer contract.Identity // the referrer's standalone identity
	warnings []string
	// simulated are the standalone namespaces the plan simulates on the referrer's cluster;
	// built when first needed (simulatesNamespace).
	simulated map[string]bool
}

// resolve returns the target identity of a referenced standalone object, renaming by the
// topology's rules objects the plan does not contain, and warning about those.
func (r *renamer) resolve(gk schema.GroupKind, namespace, name string) (contract.Identity, string, bool) {
	resource, ok := r.engine.Discovery.ResourceForKind(gk)
	if !ok {
		return contract.Identity{}, "", false
	}
	src := contract.Identity{Group: gk.Group, Resource: resource, Namespace: namespace, Name: name}
	if p, ok := r.index[keyOf(onCluster+r.from, src)]; ok {
		return p.target, p.cluster, true
	}
	if p, ok := r.index[keyOf("", src)]; ok {
		if p.cluster != r.from {
			r.warn(fmt.Sprintf("refers to %s, which lands on the %s cluster, not the %s cluster", src, p.cluster, r.from))
			return contract.Identity{}, "", false
		}
		return p.target, p.cluster, true
	}
	if r.from != routing.ClusterManagement {
		return contract.Identity{}, "", false // only the management side renames
	}
	if namespace == "" {
		if _, known := r.engine.Discovery.Namespaced(src.GroupResource()); known {
			return contract.Identity{}, "", false // a cluster-scoped object outside the plan keeps its name
		}
	}
	if target, ok := r.everyNamespace(src); ok {
		return target, r.from, true
	}
	t := r.outsideTarget(src)
	r.warn(t.warning)
	if t.err != nil {
		return contract.Identity{}, "", false
	}
	return t.target, r.from, true
}

func (r *renamer) warn(msg string) {
	if !slices.Contains(r.warnings, msg) {
		r.warnings = append(r.warnings, msg)
	}
}

// rewriteInvolvedObject renames an event's references with the engine's renamer, and
// returns the changes it made.
func rewriteInvolvedObject(obj *yaml.RNode, r *renamer, eventNamespace string) ([]plans.Change, error) {
	return rewriteEventReferences(obj, r.engine.Discovery, func(gk schema.GroupKind, namespace, name string) (contract.Identity, bool) {
		target, _, ok := r.resolve(gk, namespace, name)
		return target, ok
	}, eventNamespace)
}

// eventReferenceFields are the fields of an event that name an object.
var eventReferenceFields = []string{"involvedObject", "regarding", "related"}

// rewriteEventReferences renames an event's involvedObject (core) or regarding and related
// (events.k8s.io) with resolve, which returns the target identity of the object a reference
// names (false when it knows none), and returns the changes it made (path, from, to), in the
// order a diff of the object before and after lists them. A reference without apiVersion is
// resolved by its kind when one group of discovery has it. The API server requires
// involvedObject.namespace to be the event's own namespace, so a namespaced reference that
// cannot be resolved still follows the event into eventNamespace.
func rewriteEventReferences(obj *yaml.RNode, discovery *contract.Discovery, resolve func(gk schema.GroupKind, namespace, name string) (contract.Identity, bool), eventNamespace string) ([]plans.Change, error) {
	var changes []plans.Change
	root := obj.YNode()
	var fields []string // in the object's order, as a diff walks them
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if k := root.Content[i].Value; slices.Contains(eventReferenceFields, k) && !slices.Contains(fields, k) {
				fields = append(fields, k)
			}
		}
	}
	for _, field := range fields {
		ref := obj.Field(field)
		if ref == nil || ref.Value == nil || ref.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		kind, name, ns := yamlnode.FieldString(ref.Value, "kind"), yamlnode.FieldString(ref.Value, "name"), yamlnode.FieldString(ref.Value, "namespace")
		if kind == "" || name == "" {
			continue
		}
		apiVersion := yamlnode.FieldString(ref.Value, "apiVersion")
		gv, _ := schema.ParseGroupVersion(apiVersion)
		if apiVersion == "" {
			gv.Group, _ = discovery.GroupForKind(kind)
		}
		set := map[string]string{}
		if target, ok := resolve(schema.GroupKind{Group: gv.Group, Kind: kind}, ns, name); ok {
			set["name"] = target.Name
			if ns != "" || target.Namespace != "" {
				set["namespace"] = target.Namespace
			}
			if target.Group != gv.Group && apiVersion != "" {
				set["apiVersion"] = schema.GroupVersion{Group: target.Group, Version: gv.Version}.String()
			}
		} else if ns != "" && ns != eventNamespace {
			set["namespace"] = eventNamespace
		}
		m := ref.Value.YNode()
		made := map[string]plans.Change{}
		for _, k := range slices.Sorted(maps.Keys(set)) {
			old, v := yamlnode.MappingValueIn(m, k), yaml.NewStringRNode(set[k]).YNode()
			if !yamlnode.Equal(old, v) {
				made[k] = plans.Change{Path: yamlnode.Pointer([]string{field, k}), From: yamlnode.Value(old), To: set[k]}
			}
			if err := yamlnode.SetString(ref.Value, v, k); err != nil {
				return nil, err
			}
		}
		// The reference's keys are now the ones it had, in its order, then the ones it
		// gained (appended in the order set): the order a diff lists their changes in.
		for i := 0; i+1 < len(m.Content) && len(made) > 0; i += 2 {
			if c, ok := made[m.Content[i].Value]; ok {
				changes = append(changes, c)
				delete(made, m.Content[i].Value)
			}
		}
	}
	return changes, nil
}

// The steps that rewrite references outside the kind/field table (Change.By).
const (
	// ByAnnotationReferences rewrites the annotations of references.AnnotationsOf.
	ByAnnotationReferences = "annotation-references"
	// ByPayloadServiceDNS rewrites in-cluster Service DNS names inside ConfigMap and Secret
	// data.
	ByPayloadServiceDNS = "payload-service-dns"
)

// everyNamespace returns the target of a reference to an object every namespace has, which
// the plan does not contain: the same name in the referrer's target namespace.
func (r *renamer) everyNamespace(src contract.Identity) (contract.Identity, bool) {
	if src.Group != "" || src.Resource != "configmaps" || src.Namespace == "" || !references.InEveryNamespace(src.Name) {
		return contract.Identity{}, false
	}
	if r.from != routing.ClusterManagement {
		return contract.Identity{}, false
	}
	target, err := r.engine.Names.ToTarget(r.from, src)
	if err != nil {
		return contract.Identity{}, false
	}
	target.Name = src.Name
	return target, true
}

// rewriteOutsideTable rewrites, with r, the references obj holds outside the kind/field
// table: the annotations of references.AnnotationsOf, and Service DNS names in the data of
// ConfigMaps and Secrets. obj is in standalone form. Each change is passed to record.
func (e Engine) rewriteOutsideTable(obj *yaml.RNode, r *renamer, record func([]plans.Change)) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if gk != kindService && gk != kindSecret && gk != kindConfigMap {
		return nil
	}
	ns := obj.GetNamespace()
	annotations := obj.GetAnnotations()
	for a := range references.AnnotationsOf(gk) {
		name := annotations[a.Annotation]
		if a.Referrer != gk || name == "" {
			continue
		}
		renamed, ok := r.Rename(references.Reference{Kind: a.To, Namespace: ns, Name: name})
		if !ok || renamed.Name == "" || renamed.Name == name {
			continue
		}
		if err := obj.PipeE(yaml.SetAnnotation(a.Annotation, renamed.Name)); err != nil {
			return fmt.Errorf("rewrite annotation %s: %w", a.Annotation, err)
		}
		record([]plans.Change{{Path: yamlnode.Pointer([]string{"metadata", "annotations", a.Annotation}), From: name, To: renamed.Name, By: ByAnnotationReferences, Kind: plans.ChangeReference}})
	}
	if gk == kindService {
		return nil
	}
	// Changes are recorded per key, as the JSON value of the key (base64 in a Secret's data).
	return references.RewriteDataRecorded(obj, gk == kindSecret, r.rewriteServiceDNS, func(path []string, from, to string) {
		record([]plans.Change{{Path: yamlnode.Pointer(path), From: from, To: to, By: ByPayloadServiceDNS, Kind: plans.ChangeReference}})
	})
}

// rewriteServiceDNS renames the Service DNS names in text that name a Service the plan
// places in the referrer's cluster, or a Service of a namespace the plan simulates there
// (which another run of the operator writes: the renamer warns it is dangling). Names of
// other namespaces (kubernetes.default.svc) are left as they are.
func (r *renamer) rewriteServiceDNS(text string) (string, bool) {
	return references.ReplaceServiceDNS(text, func(m references.DNSMatch) (string, string, bool) {
		src := contract.Identity{Resource: "services", Namespace: m.Namespace, Name: m.Name}
		_, inPlan := r.index[keyOf("", src)]
		if !inPlan && !r.simulatesNamespace(m.Namespace) {
			return "", "", false
		}
		target, _, ok := r.resolve(kindService, m.Namespace, m.Name)
		if !ok || (target.Name == m.Name && target.Namespace == m.Namespace) {
			return "", "", false
		}
		return target.Name, target.Namespace, true
	})
}

// simulatesNamespace says whether the plan places objects of standalone namespace ns in the
// referrer's cluster under another namespace (a simulated namespace).
func (r *renamer) simulatesNamespace(ns string) bool {
	if r.simulated == nil {
		r.simulated = map[string]bool{}
		for k, p := range r.index {
			if k.namespace != "" && p.cluster == r.from && p.target.Namespace != k.namespace {
				r.simulated[k.namespace] = true
			}
		}
	}
	return r.simulated[ns]
}

// outsideTable maps back the references rewriteOutsideTable rewrote, in obj found in
// namespace ns of the target.
func (r *inverseRenamer) outsideTable(obj *yaml.RNode, ns string) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if gk != kindService && gk != kindSecret && gk != kindConfigMap {
		return nil
	}
	annotations := obj.GetAnnotations()
	for a := range references.AnnotationsOf(gk) {
		name := annotations[a.Annotation]
		if a.Referrer != gk || name == "" {
			continue
		}
		if renamed, ok := r.Rename(references.Reference{Kind: a.To, Namespace: ns, Name: name}); ok && renamed.Name != "" {
			if err := obj.PipeE(yaml.SetAnnotation(a.Annotation, renamed.Name)); err != nil {
				return err
			}
		}
	}
	if gk == kindService {
		return nil
	}
	return references.RewriteData(obj, gk == kindSecret, func(text string) (string, bool) {
		return references.ReplaceServiceDNS(text, func(m references.DNSMatch) (string, string, bool) {
			if m.Namespace != ns {
				return "", "", false
			}
			src, ok := r.lookup(kindService, m.Namespace, m.Name)
			if !ok || src.Namespace == "" || (src.Namespace == m.Namespace && src.Name == m.Name) {
				return "", "", false
			}
			return src.Name, src.Namespace, true
		})
	})
}

// ByStatusReferences rewrites the entries of references.StatusReference lists (Change.By).
const ByStatusReferences = "status-references"

// rewriteStatusReferences rewrites, with r, the entries of obj's references.StatusReference lists that name
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

// outsideTarget is where an object outside the plan is expected, or why it cannot be mapped,
// and the warning of a reference to it.
type outsideTarget struct {
	target  contract.Identity
	err     error
	warning string
}

// outsideTarget returns the target of src, an object outside the plan on the referrer's
// cluster (the topology's name mapping), remembered for the plan.
func (r *renamer) outsideTarget(src contract.Identity) outsideTarget {
	var k objectKey
	if r.outside != nil {
		k = keyOf(r.from, src)
		if v, ok := r.outside.Load(k); ok {
			return v.(outsideTarget)
		}
	}
	var t outsideTarget
	t.target, t.err = r.engine.Names.ToTarget(r.from, src)
	if t.err != nil {
		t.warning = fmt.Sprintf("refers to %s, which cannot be mapped: %v", src, t.err)
	} else {
		t.warning = fmt.Sprintf("dangling reference: %s is not in the plan; it is expected as %s", src, t.target)
	}
	if r.outside != nil {
		r.outside.Store(k, t)
	}
	return t
}

// The kinds whose references outside the kind/field table the renamer follows.
var (
	kindService   = schema.GroupKind{Kind: "Service"}
	kindSecret    = schema.GroupKind{Kind: "Secret"}
	kindConfigMap = schema.GroupKind{Kind: "ConfigMap"}
)
