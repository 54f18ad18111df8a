package translate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/podsecurity"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/references"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/internal/translate/transform"

	"github.com/topolayer/topolayer/internal/yamlnode"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// StandaloneStages returns the stage list of a topology that keeps every object on one
// cluster: the references follow the objects they name (a configured routing may still
// rename some), the identity is written, then the transforms run.
func StandaloneStages(transforms ...transform.Transform) []Stage {
	return append([]Stage{
		FollowStatusReferences{}, FollowTableReferences{}, FollowOutsideReferences{},
		FollowEventReferences{}, SetIdentity{},
	}, TransformStages(transforms...)...)
}

// HostedStages returns the stage list of the hosted topology: the standalone ones, with the
// selectors of objects in simulated namespaces scoped to them, the standalone identity
// recorded on every object, the guest identity of operands placed on the management
// cluster, then the transforms.
func HostedStages(transforms ...transform.Transform) []Stage {
	return append([]Stage{
		FollowStatusReferences{}, FollowTableReferences{}, FollowOutsideReferences{},
		ScopeSelectors{}, FollowEventReferences{}, SetIdentity{}, RecordSource{},
		DisableToken{}, MountGuestKubeconfig{},
	}, TransformStages(transforms...)...)
}

// TransformStages returns a stage for each transform, in order.
func TransformStages(transforms ...transform.Transform) []Stage {
	out := make([]Stage, len(transforms))
	for i := range transforms {
		out[i] = TransformStage{Transform: transforms[i]}
	}
	return out
}

// FollowStatusReferences renames the object references of status lists (references.Statuses:
// a ClusterOperator's relatedObjects, an operator's generations) to where the objects they
// name land.
type FollowStatusReferences struct{}

// Name implements Stage.
func (FollowStatusReferences) Name() string { return ByStatusReferences }

// Rewrite implements Stage.
func (FollowStatusReferences) Rewrite(c *StageContext) ([]plans.Change, error) {
	changes := c.Scratch()
	err := c.Edit(func(obj *yaml.RNode) error {
		return c.engine.rewriteStatusReferences(obj, c.renamer, func(cs []plans.Change) { changes = append(changes, cs...) })
	})
	if err != nil {
		return nil, fmt.Errorf("rewrite status references: %w", err)
	}
	c.flushWarnings()
	return changes, nil
}

// FollowTableReferences renames the references of the reference table (kustomize's name
// references: volumes, env sources, RBAC subjects and roles, ...) in the body.
type FollowTableReferences struct{}

// Name implements Stage.
func (FollowTableReferences) Name() string { return plans.ByReferenceTable }

// Rewrite implements Stage.
func (FollowTableReferences) Rewrite(c *StageContext) ([]plans.Change, error) {
	if c.Status() || !references.HasReferrers(c.obj.GetKind()) {
		return nil, nil
	}
	var changed []string
	changes, err := c.Diff(plans.ByReferenceTable, plans.ChangeReference, func(obj *yaml.RNode) (*yaml.RNode, error) {
		var err error
		changed, _, err = references.RewriteReferences(obj, c.renamer)
		return nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("rewrite references: %w", err)
	}
	c.flushWarnings()
	if len(changed) == 0 {
		return nil, nil
	}
	return changes, nil
}

// FollowOutsideReferences renames the references outside the reference table: annotations
// naming objects (references.Annotations) and service DNS names in data.
type FollowOutsideReferences struct{}

// Name implements Stage.
func (FollowOutsideReferences) Name() string { return "outside-references" }

// Rewrite implements Stage.
func (FollowOutsideReferences) Rewrite(c *StageContext) ([]plans.Change, error) {
	if c.Status() {
		return nil, nil
	}
	changes := c.Scratch()
	err := c.Edit(func(obj *yaml.RNode) error {
		return c.engine.rewriteOutsideTable(obj, c.renamer, func(cs []plans.Change) { changes = append(changes, cs...) })
	})
	if err != nil {
		return nil, err
	}
	c.flushWarnings()
	return changes, nil
}

// ScopeSelectors labels the pods of an object placed in the HCP namespace from a simulated
// namespace with that namespace and the operator, and narrows its selectors to them
// (RuleSelectorScope): a Service, workload, PDB or NetworkPolicy selects in the HCP namespace
// only what it selected in its own.
type ScopeSelectors struct{}

// Name implements Stage.
func (ScopeSelectors) Name() string { return scope.Rule }

// Rewrite implements Stage.
func (ScopeSelectors) Rewrite(c *StageContext) ([]plans.Change, error) {
	e, src := c.engine, c.w.entry.Source
	if c.Status() || !e.scopes(c.w.entry.Target.Cluster, src, c.w.entry.Target.Identity) || !scope.Scopable(src.Group, src.Resource) && !podspec.MayHold(podsecurity.GroupKindOf(c.obj)) {
		return nil, nil
	}
	s := &scope.Scoper{Namespace: src.Namespace, HCP: e.HCPNamespace, Operator: e.Operator, Simulated: func(ns string) bool { return e.simulatesNamespace(c.renamer, ns) }}
	changes, err := c.Diff(scope.Rule, plans.ChangeTransformed, func(obj *yaml.RNode) (*yaml.RNode, error) {
		return nil, s.Scope(obj, src.Group, src.Resource)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", scope.Rule, err)
	}
	c.Warn(s.Warnings...)
	return changes, nil
}

// FollowEventReferences renames an event's involvedObject (core) or regarding and related
// (events.k8s.io), and keeps a namespaced reference in the event's namespace as the API
// server requires. An event's references to objects outside the plan do not warn: events
// name the same few objects by the thousand.
type FollowEventReferences struct{}

// Name implements Stage.
func (FollowEventReferences) Name() string { return plans.ByEventInvolvedObject }

// Rewrite implements Stage.
func (FollowEventReferences) Rewrite(c *StageContext) ([]plans.Change, error) {
	if c.Status() || !c.w.entry.Source.IsEvent() {
		return nil, nil
	}
	var changes []plans.Change
	err := c.Edit(func(obj *yaml.RNode) error {
		var err error
		changes, err = rewriteInvolvedObject(obj, c.renamer, c.w.entry.Target.Identity.Namespace)
		return err
	})
	c.flushed = len(c.renamer.warnings)
	if err != nil {
		return nil, fmt.Errorf("rewrite involvedObject: %w", err)
	}
	for i := range changes {
		changes[i].By, changes[i].Kind = plans.ByEventInvolvedObject, plans.ChangeReference
	}
	return changes, nil
}

// SetIdentity writes the target identity into the body: apiVersion (a shadow group), kind (a
// ClusterRole that became a Role), namespace and name, and the namespace of a pod template.
type SetIdentity struct{}

// Name implements Stage.
func (SetIdentity) Name() string { return plans.ByNamespaces }

// Rewrite implements Stage.
func (SetIdentity) Rewrite(c *StageContext) ([]plans.Change, error) {
	var changes []plans.Change
	err := c.Edit(func(obj *yaml.RNode) error {
		var err error
		changes, err = c.engine.setIdentity(obj, c.w.entry.Source, c.w.entry.Target.Identity, c.w.entry.Rule)
		return err
	})
	return changes, err
}

// RecordSource records the standalone identity (namespaces.SourceAnnotations) and the
// operator (namespaces.LabelOperator) on every object it writes: the inverse mapping reads
// them back.
type RecordSource struct{}

// Name implements Stage.
func (RecordSource) Name() string { return plans.ByAnnotate }

// ChangesBodies implements BodyStage: every object is annotated.
func (RecordSource) ChangesBodies() bool { return true }

// Rewrite implements Stage.
func (RecordSource) Rewrite(c *StageContext) ([]plans.Change, error) {
	if c.Status() {
		return nil, nil
	}
	changes := c.Scratch()
	err := c.Edit(func(obj *yaml.RNode) error {
		// The keys of a field that change, set at once.
		set := func(field string, keys, values []string) error {
			var ks, vs []string
			for i, k := range keys {
				var from any
				if old, ok := yamlnode.MetadataString(obj, field, k); ok {
					if old == values[i] {
						continue
					}
					from = old
				}
				ks, vs = append(ks, k), append(vs, values[i])
				changes = append(changes, plans.Change{Path: "/metadata/" + field + "/" + yamlnode.PointerEscape(k), From: from, To: values[i], By: plans.ByAnnotate, Kind: plans.ChangeRecorded, Detail: detailRecorded})
			}
			if len(ks) == 0 {
				return nil
			}
			return yamlnode.SetMetadataStrings(obj, field, ks, vs)
		}
		annotations := namespaces.SourceAnnotations(c.w.entry.Source)
		keys := slices.AppendSeq(make([]string, 0, len(annotations)), maps.Keys(annotations))
		slices.Sort(keys)
		values := make([]string, len(keys))
		for i, k := range keys {
			values[i] = annotations[k]
		}
		if err := set("annotations", keys, values); err != nil {
			return err
		}
		return set("labels", []string{namespaces.LabelOperator}, []string{c.engine.Operator})
	})
	if err != nil {
		return nil, err
	}
	return changes, nil
}

// DisableToken stops the renamed service account of a guest identity (RuleGuestIdentity)
// from mounting its token into pods on the management cluster.
type DisableToken struct{}

// Name implements Stage.
func (DisableToken) Name() string { return guestidentity.Rule + "/disable-token" }

// Rewrite implements Stage.
func (DisableToken) Rewrite(c *StageContext) ([]plans.Change, error) {
	if !c.w.tokenless || c.Status() {
		return nil, nil
	}
	changes, err := c.Diff(guestidentity.Rule, plans.ChangeTransformed, func(obj *yaml.RNode) (*yaml.RNode, error) {
		return nil, disableToken(obj)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", guestidentity.Rule, err)
	}
	return changes, nil
}

// MountGuestKubeconfig mounts into the pods of a workload placed on the management cluster
// the kubeconfig of its standalone service account on the guest (RuleGuestIdentity), and
// points KUBECONFIG at it.
type MountGuestKubeconfig struct{}

// Name implements Stage.
func (MountGuestKubeconfig) Name() string { return guestidentity.Rule + "/mount-kubeconfig" }

// Rewrite implements Stage.
func (MountGuestKubeconfig) Rewrite(c *StageContext) ([]plans.Change, error) {
	g := c.w.guestSA
	if g == nil || c.Status() {
		return nil, nil
	}
	sa, err := c.engine.Names.ToTarget(routing.ClusterManagement, contract.Identity{Version: "v1", Resource: "serviceaccounts", Namespace: g.namespace, Name: g.name})
	if err != nil {
		return nil, fmt.Errorf("%s: service account: %w", guestidentity.Rule, err)
	}
	f := guestidentity.Mount{ServiceAccountName: sa.Name, SecretName: guestidentity.SecretName(g.namespace, g.name)}
	if d := c.w.droppedTokens; d != nil {
		if d.err != nil {
			return nil, d.err
		}
		f.WithoutSecrets = d.targets // shared by the namespace's workloads: read only
	}
	return c.Diff(guestidentity.Rule, plans.ChangeTransformed, func(obj *yaml.RNode) (*yaml.RNode, error) {
		sites, err := podspec.FindNode(podsecurity.GroupKindOf(obj), obj.YNode())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", guestidentity.Rule, err)
		}
		for _, site := range sites {
			if keys, ok := site.Template.AsKeys(); ok && site.Known {
				f.PodTemplatePath = keys // the spec is created where the kind has it
				if _, err := f.Filter([]*yaml.RNode{obj}); err != nil {
					return nil, err
				}
			} else if spec := site.Spec.Node(obj.YNode()); spec != nil && spec.Kind == yaml.MappingNode {
				if err := f.Spec(yaml.NewRNode(spec)); err != nil {
					return nil, fmt.Errorf("%s: %w", site.Spec, err)
				}
			}
		}
		return nil, nil
	})
}

// TransformStage runs one transform (a profile's opinion or a configured patch) on the
// objects it selects.
type TransformStage struct {
	Transform transform.Transform
}

// Name implements Stage.
func (t TransformStage) Name() string { return t.Transform.Name }

// ChangesBodies implements BodyStage: a transform changes whatever it selects.
func (TransformStage) ChangesBodies() bool { return true }

// Rewrite implements Stage.
func (s TransformStage) Rewrite(c *StageContext) ([]plans.Change, error) {
	t := &s.Transform
	if t.Filter == nil || c.Status() || t.Match.Resource != "" && t.Match.Resource != c.w.entry.Source.Resource {
		return nil, nil // most of the profile's transforms are for one kind of workload
	}
	ctx := c.Source()
	if !t.Selects(ctx.Source, ctx.Cluster) || (t.Strips && c.engine.Policy.PodSecurityMode() == policy.PodSecurityReject) || (t.Applies != nil && !t.Applies(c.obj)) {
		return nil, nil
	}
	f, err := t.Filter(ctx)
	if err != nil {
		return nil, fmt.Errorf("transform %s: %w", t.Name, err)
	}
	// A filter that keeps to some keys of one mapping of this object is diffed there; any
	// other against the snapshot of the whole object.
	if scope, ok := scopeOf(f, c.obj.YNode()); ok {
		var changes []plans.Change
		_ = c.Edit(func(obj *yaml.RNode) error {
			scope.edit()
			changes = scope.changes(obj.YNode(), t.Name)
			return nil
		})
		c.w.entry.Transforms = append(c.w.entry.Transforms, t.Name)
		return changes, nil
	}
	changes, err := c.Diff(t.Name, plans.ChangeTransformed, func(obj *yaml.RNode) (*yaml.RNode, error) {
		out, err := f.Filter([]*yaml.RNode{obj})
		if err != nil {
			return nil, err
		}
		if len(out) != 1 {
			return nil, fmt.Errorf("returned %d objects, want 1", len(out))
		}
		return out[0], nil
	})
	if err != nil {
		return nil, fmt.Errorf("transform %s: %w", t.Name, err)
	}
	c.w.entry.Transforms = append(c.w.entry.Transforms, t.Name)
	return changes, nil
}

// scopes says whether the selectors of an object placed as target on cluster are scoped to
// its simulated namespace: it came from a namespace and lands in the HCP namespace. An
// object whose standalone namespace is the HCP namespace itself is scoped like any other:
// its selectors would otherwise reach the environment's own pods there.
func (e Engine) scopes(cluster string, src, target contract.Identity) bool {
	return e.HCPNamespace != "" && cluster == routing.ClusterManagement && target.Namespace == e.HCPNamespace &&
		src.Namespace != ""
}

// simulatesNamespace says whether standalone namespace ns is simulated in the HCP namespace
// for this operator: its objects land there, because the operator declares outputs in it
// (Configuration or Management output-resources, or the supplement) or the plan places some
// there. Other namespaces (openshift-dns, openshift-etcd) exist, if at all, as the management
// cluster's own.
func (e Engine) simulatesNamespace(r *renamer, ns string) bool {
	if ns == "" || ns == e.HCPNamespace {
		return false
	}
	for _, d := range []*contract.OutputResources{e.Declared, e.Supplement} {
		if d == nil {
			continue
		}
		for _, c := range []contract.Class{contract.ClassConfiguration, contract.ClassManagement} {
			l := d.ForClass(c)
			if slices.Contains(l.EventingNamespaces, ns) {
				return true
			}
			for _, list := range [][]contract.ExactResourceID{l.ExactResources, l.GeneratedNameResources} {
				for _, id := range list {
					if id.Namespace == ns {
						return true
					}
				}
			}
		}
	}
	return r.simulatesNamespace(ns)
}

// filterScope is where a scoped filter works on an object: the mapping's path, the keys, their
// values there before the edit, and the edit.
type filterScope struct {
	path, keys []string
	before     *yaml.Node
	edit       func()
}

// scopeOf returns the scope of f on obj, with a copy of the values it may change; false when
// f is not scoped on obj, or a node on the scope's path is neither a mapping nor missing (the
// scope then says nothing of it).
func scopeOf(f kio.Filter, obj *yaml.Node) (filterScope, bool) {
	sf, ok := f.(transform.Scoped)
	if !ok {
		return filterScope{}, false
	}
	path, keys, edit, ok := sf.Scope(obj)
	if !ok || len(path) == 0 {
		return filterScope{}, false
	}
	at, ok := yamlnode.LookupNode(obj, path...)
	if !ok || (at != nil && at.Kind != yaml.MappingNode) {
		return filterScope{}, false
	}
	return filterScope{path: path, keys: keys, before: yamlnode.CopyTree(scopedKeys(at, keys)), edit: edit}, true
}

// changes returns the changes the filter made in obj: a diff of the scope's keys before and
// after, which lists them as a diff of the whole object does (the mapping's keys in their
// order, then those it gained).
func (s filterScope) changes(obj *yaml.Node, by string) []plans.Change {
	after, _ := yamlnode.LookupNode(obj, s.path...)
	if after != nil && after.Kind != yaml.MappingNode {
		after = nil
	}
	return plans.DiffAt(s.path, s.before, scopedKeys(after, s.keys), by, plans.ChangeTransformed)
}

// scopedKeys returns a mapping of the pairs of m whose key is one of keys, in m's order; nil
// for a nil m.
func scopedKeys(m *yaml.Node, keys []string) *yaml.Node {
	if m == nil {
		return nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if slices.Contains(keys, m.Content[i].Value) {
			out.Content = append(out.Content, m.Content[i], m.Content[i+1])
		}
	}
	return out
}
