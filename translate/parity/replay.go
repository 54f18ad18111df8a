package parity

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

// step is one change the replay made, and why.
type step struct {
	cause Cause
	path  []segment
}

// replay rebuilds the hosted object from the standalone one, one documented rule at a time,
// and remembers which rule changed which path. It runs the steps in the engine's order:
// references, the event's involvedObject, identity, identity annotations, transforms; then the
// applier's ownerReference, when the hosted object is a live one that has it.
type replay struct {
	opts    Options
	index   map[objectKey]placement // standalone object -> where the hosted plan puts it
	node    *yaml.RNode
	current map[string]any
	steps   []step
	notes   []string // what could not be replayed
}

// placement is where the hosted plan puts one standalone object.
type placement struct {
	cluster string
	target  contract.Identity
}

// run replays the rules on the standalone body s towards the hosted object h, placed by
// entries, and returns the predicted hosted body.
func (r *replay) run(s, h *Object, entries []translate.Entry) (map[string]any, error) {
	node, err := toNode(s.Body)
	if err != nil {
		return nil, err
	}
	r.node, r.current = node, s.Body
	rule := rulesOf(entries)

	ren := &renamer{opts: r.opts, index: r.index, from: h.Cluster}
	if _, _, err := translate.RewriteReferences(r.node, ren); err != nil {
		return nil, err
	}
	if err := r.record(Cause{Kind: CauseReference, By: "reference-table"}); err != nil {
		return nil, err
	}
	if s.Source.IsEvent() {
		if err := translate.RewriteEventReferences(r.node, r.opts.discovery(), ren.resolve, h.Identity.Namespace); err != nil {
			return nil, err
		}
		if err := r.record(Cause{Kind: CauseReference, By: "event-involved-object"}); err != nil {
			return nil, err
		}
	}
	if err := r.identity(s.Source, h.Identity, rule); err != nil {
		return nil, err
	}
	if recordsIdentity(h.Body) {
		for _, k := range slices.Sorted(maps.Keys(namespaces.SourceAnnotations(s.Source))) {
			if err := r.node.PipeE(yaml.SetAnnotation(k, namespaces.SourceAnnotations(s.Source)[k])); err != nil {
				return nil, err
			}
		}
		if err := r.node.PipeE(yaml.SetLabel(namespaces.LabelOperator, entries[0].Operator)); err != nil {
			return nil, err
		}
		if err := r.record(Cause{Kind: CauseRecorded, By: "annotate", Detail: "the standalone identity and the operator, for the inverse mapping"}); err != nil {
			return nil, err
		}
	}
	if err := r.transforms(s, h, entries); err != nil {
		return nil, err
	}
	if err := r.owner(h.Body); err != nil {
		return nil, err
	}
	return r.current, nil
}

// record diffs the node against the last state and attributes every change to cause.
func (r *replay) record(cause Cause) error {
	next, err := toMap(r.node)
	if err != nil {
		return err
	}
	for _, c := range diff(r.current, next) {
		r.steps = append(r.steps, step{cause: cause, path: c.path})
	}
	r.current = next
	return nil
}

// identity writes the target identity into the body, as the engine does.
func (r *replay) identity(src, target contract.Identity, rule string) error {
	if target.Group != src.Group {
		gv := schema.GroupVersion{Group: target.Group, Version: target.Version}.String()
		if err := r.node.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(gv))); err != nil {
			return err
		}
		kind := CauseShadowed
		if orig, ok := namespaces.IsShadowGroup(target.Group); !ok || orig != src.Group {
			kind = CauseConverted
		}
		if err := r.record(Cause{Kind: kind, By: "namespaces", Detail: src.Group + " -> " + target.Group}); err != nil {
			return err
		}
	}
	if target.Resource != src.Resource {
		kind, ok := r.opts.discovery().KindFor(target.GroupVersionResource())
		if !ok {
			r.notes = append(r.notes, fmt.Sprintf("no kind known for %s", target.GroupVersionResource()))
		} else if err := r.node.PipeE(yaml.SetField("kind", yaml.NewStringRNode(kind))); err != nil {
			return err
		}
		if err := r.record(Cause{Kind: CauseConverted, By: rule, Detail: src.Resource + " -> " + target.Resource}); err != nil {
			return err
		}
	}
	if target.Namespace != src.Namespace {
		if err := r.node.SetNamespace(target.Namespace); err != nil {
			return err
		}
		for _, path := range [][]string{{"spec", "template", "metadata"}, {"spec", "jobTemplate", "spec", "template", "metadata"}} {
			meta, err := r.node.Pipe(yaml.Lookup(path...))
			if err == nil && meta != nil && meta.Field("namespace") != nil {
				if err := meta.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(target.Namespace))); err != nil {
					return err
				}
			}
		}
	}
	if target.Name != src.Name {
		if err := r.node.SetName(target.Name); err != nil {
			return err
		}
	}
	if target.GenerateName != src.GenerateName {
		meta, err := r.node.Pipe(yaml.LookupCreate(yaml.MappingNode, "metadata"))
		if err != nil {
			return err
		}
		if err := meta.PipeE(yaml.SetField("generateName", yaml.NewStringRNode(target.GenerateName))); err != nil {
			return err
		}
	}
	return r.record(Cause{Kind: CauseRenamed, By: "namespaces", Detail: "simulated namespace"})
}

// transforms replays the transforms the hosted entries name, in the engine's order.
func (r *replay) transforms(s, h *Object, entries []translate.Entry) error {
	named := map[string]bool{}
	for _, e := range entries {
		for _, t := range e.Transforms {
			named[t] = true
		}
	}
	labels := map[string]string{}
	if meta, ok := s.Body["metadata"].(map[string]any); ok {
		if l, ok := meta["labels"].(map[string]any); ok {
			for k, v := range l {
				if str, ok := v.(string); ok {
					labels[k] = str
				}
			}
		}
	}
	ctx := translate.Context{
		Source:       routing.Object{Class: entries[0].Class, Identity: s.Source, Labels: labels},
		Cluster:      h.Cluster,
		HCPNamespace: r.opts.HCPNamespace, HostedControlPlane: r.opts.HostedControlPlane,
	}
	replayed := map[string]bool{}
	for _, t := range r.opts.Transforms {
		// Profiles name one transform per workload kind alike: select as the engine does.
		if !named[t.Name] || (t.Cluster != "" && t.Cluster != h.Cluster) || !t.Match.Matches(ctx.Source) {
			continue
		}
		replayed[t.Name] = true
		f, err := t.Filter(ctx)
		if err != nil {
			return fmt.Errorf("transform %s: %w", t.Name, err)
		}
		out, err := f.Filter([]*yaml.RNode{r.node})
		if err != nil {
			return fmt.Errorf("transform %s: %w", t.Name, err)
		}
		if len(out) != 1 {
			return fmt.Errorf("transform %s: returned %d objects, want 1", t.Name, len(out))
		}
		r.node = out[0]
		n := len(r.steps)
		if err := r.record(Cause{Kind: CauseTransform, By: t.Name}); err != nil {
			return err
		}
		for i := n; i < len(r.steps); i++ {
			if slices.Equal(r.steps[i].path, ownerAnnotationPath) {
				r.steps[i].cause = Cause{Kind: CauseOwner, By: t.Name, Detail: "the applier turns annotation " + translate.AnnotationOwnerHCP + " into an ownerReference to the HostedControlPlane"}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(named)) {
		if replayed[name] {
			continue
		}
		r.notes = append(r.notes, fmt.Sprintf("transform %s is named by the plan but not given to replay", name))
	}
	return nil
}

// owner replays what the applier does with the owner annotation on a live object: the
// annotation goes, an ownerReference to that HostedControlPlane comes.
func (r *replay) owner(hosted map[string]any) error {
	name := r.node.GetAnnotations()[translate.AnnotationOwnerHCP]
	if name == "" {
		// The management target adds the owner of its own accord (apply.Options.HostedControlPlane);
		// the annotation only asked for it in plans made before.
		name = r.opts.HostedControlPlane
	}
	if name == "" {
		return nil
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
		return nil // not applied yet: the annotation is what the hosted object has
	}
	if _, err := r.node.Pipe(yaml.ClearAnnotation(translate.AnnotationOwnerHCP)); err != nil {
		return err
	}
	current, err := toMap(r.node)
	if err != nil {
		return err
	}
	m, _ := current["metadata"].(map[string]any)
	if m == nil {
		return nil
	}
	existing, _ := m["ownerReferences"].([]any)
	m["ownerReferences"] = append(existing, owners...)
	if r.node, err = toNode(current); err != nil {
		return err
	}
	return r.record(Cause{Kind: CauseOwner, By: "apply", Detail: "ownerReference to HostedControlPlane " + name + " (the management target's owner)"})
}

// ownerAnnotationPath is where a transform asks the applier for the HostedControlPlane owner.
var ownerAnnotationPath = []segment{"metadata", "annotations", translate.AnnotationOwnerHCP}

// recordsIdentity reports whether a hosted body carries topolayer's identity annotations.
func recordsIdentity(body map[string]any) bool {
	meta, _ := body["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	_, ok := ann[namespaces.AnnotationStandaloneResource]
	return ok
}

// renamer answers where a referenced standalone object is on the hosted side, from the
// hosted plan's entries, and for objects outside the plan from the name mapping.
type renamer struct {
	opts  Options
	index map[objectKey]placement
	from  string // the referrer's cluster
}

var _ translate.Renamer = (*renamer)(nil)

// Rename implements translate.Renamer.
func (r *renamer) Rename(ref translate.Reference) (translate.Renamed, bool) {
	target, ok := r.resolve(ref.Kind, ref.Namespace, ref.Name)
	if !ok {
		return translate.Renamed{}, false
	}
	out := translate.Renamed{Namespace: target.Namespace, Name: target.Name}
	if resource, _ := r.opts.discovery().ResourceForKind(ref.Kind); resource != target.Resource {
		if kind, ok := r.opts.discovery().KindForResource(target.GroupResource()); ok {
			out.Kind = kind
		}
	}
	return out, true
}

func (r *renamer) resolve(gk schema.GroupKind, namespace, name string) (contract.Identity, bool) {
	d := r.opts.discovery()
	resource, ok := d.ResourceForKind(gk)
	if !ok {
		return contract.Identity{}, false
	}
	src := contract.Identity{Group: gk.Group, Resource: resource, Namespace: namespace, Name: name}
	if p, ok := r.index[keyOf(src)]; ok {
		return p.target, p.cluster == r.from
	}
	if r.from != routing.ClusterManagement || r.opts.Names == nil {
		return contract.Identity{}, false
	}
	if namespace == "" {
		if _, known := d.Namespaced(src.GroupResource()); known {
			return contract.Identity{}, false
		}
	}
	target, err := r.opts.Names.ToTarget(r.from, src)
	return target, err == nil
}

// toNode converts JSON values to a kyaml node.
func toNode(v map[string]any) (*yaml.RNode, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return yaml.Parse(string(data))
}

// toMap converts a kyaml node to JSON values.
func toMap(n *yaml.RNode) (map[string]any, error) {
	data, err := n.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func rulesOf(entries []translate.Entry) string {
	var rules []string
	for _, e := range entries {
		if !slices.Contains(rules, e.Rule) {
			rules = append(rules, e.Rule)
		}
	}
	if len(rules) == 1 {
		return rules[0]
	}
	data, _ := json.Marshal(rules)
	return string(data)
}

func identityName(id contract.Identity) string {
	name := id.Name
	if name == "" {
		name = id.GenerateName + "*"
	}
	if id.Namespace == "" {
		return name
	}
	return id.Namespace + "/" + name
}

// explains reports whether the predicted and hosted values agree at path.
func explains(predicted, hosted map[string]any, path []segment) bool {
	pv, pok := lookup(predicted, path)
	hv, hok := lookup(hosted, path)
	return pok == hok && reflect.DeepEqual(pv, hv)
}
