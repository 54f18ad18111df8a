package translate

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/parallel"
	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/internal/translate/declare"
	"github.com/topolayer/topolayer/internal/translate/nodemachinery"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Engine turns an operator's output directory into a plan. Its fields are its configuration;
// Plan is pure: no I/O, no clock, the same plan for the same input.
type Engine struct {
	// Topology is TopologyStandalone or TopologyHosted; it is copied into the plan.
	Topology string
	// Operator names the operator whose outputs are translated.
	Operator string
	// Router places each mutation.
	Router routing.Router
	// Names maps standalone identities to target identities.
	Names namespaces.Mapper
	// Declared is the operator's output-resources. When set, a mutation that its class's
	// declarations do not match is rejected. When nil, the class folders are trusted.
	Declared *contract.OutputResources
	// Supplement is what the configuration declares for the operator besides Declared
	// (config operators[].supplements.outputs): a mutation it matches is declared, and one
	// the operator wrote under Unspecified is placed in the first class it declares it in.
	// Entries it declares say so (Entry.DeclaredBy).
	Supplement *contract.OutputResources
	// Stages rewrite the body of every object the engine rewrites, in order (see Stage):
	// StandaloneStages or HostedStages, composed by the topology. nil is StandaloneStages().
	Stages []Stage
	// HCPNamespace and HostedControlPlane name the hosted control plane; empty standalone.
	HCPNamespace, HostedControlPlane string
	// Discovery maps kinds to resources for references; nil means contract.DefaultDiscovery().
	Discovery *contract.Discovery
	// Policy bounds what the operator's outputs may grant, install or reach; nil checks
	// nothing. Its rejections name the policy/ rules (see the package documentation).
	Policy *policy.Policy
	// GuestIdentity, when set (the hosted topology), makes the operands placed on the
	// management cluster act on the guest as their standalone service accounts
	// (RuleGuestIdentity); nil leaves their pods' identities as they are.
	GuestIdentity *GuestIdentity

	// Containment is the management cluster's allow-list (RuleManagementKind,
	// RuleManagementFields, RuleReservedLabels); nil (standalone) checks nothing more.
	Containment *policy.Containment

	// composed is what the planner learnt of Stages.
	composed composition
	// checker runs the policy's checks (package check) with this configuration.
	checker *check.Checker
}

// newChecker returns the checks of the engine's policy and allow-list, over what it knows of
// the operator.
func (e Engine) newChecker() *check.Checker {
	c := &check.Checker{
		Operator: e.Operator, Policy: e.Policy, Containment: e.Containment,
		Declared: e.Declared, Supplement: e.Supplement, Names: e.Names, Discovery: e.Discovery,
		RemovesOwnerReferences: func(name string) bool {
			for _, s := range e.Stages {
				if t, ok := s.(TransformStage); ok && t.Transform.Name == name {
					return t.Transform.RemovesOwnerReferences
				}
			}
			return false
		},
	}
	if g := e.GuestIdentity; g != nil {
		c.ManagementAPI = g.needsManagementAPI
	}
	return c
}

// AdmitPatched judges obj, the object a patch entry of a plan makes on its target, by the
// checks the engine runs on a whole object written there (check.Checker.AdmitPatched): the
// admission the topology gives the management target (apply.Options.Admission).
func (e Engine) AdmitPatched(entry plans.Entry, live, obj *unstructured.Unstructured) error {
	return e.newChecker().AdmitPatched(entry, live, obj)
}

// Standalone returns the engine of the standalone topology: every mutation to the one
// cluster, identities and bodies unchanged.
func Standalone(operator string, declared *contract.OutputResources) Engine {
	return Engine{
		Topology: plans.TopologyStandalone,
		Operator: operator,
		Router:   routing.Standalone(),
		Names:    namespaces.Identity{},
		Declared: declared,
	}
}

// work is one mutation on its way through the engine.
type work struct {
	m     *contract.Mutation
	entry plans.Entry
	// src is the object of an object-bearing action as the operator wrote it (the reader's
	// parse, shared: never changed); nil for patches and deletes, and while parked.
	src *unstructured.Unstructured
	// parked says src went after placement and the body file's bytes stand for it until the
	// rewrite parses them again (source; Engine.holdOnce).
	parked bool
	// obj is src as a YAML tree, built when first needed (tree); most entries of a
	// standalone plan never need it.
	obj *yaml.RNode
	// final is the target object of an apply entry once rewritten; nil while it is src
	// unchanged (unchanged) or there is none.
	final *yaml.RNode
	// unchanged marks an apply entry whose object is written as the operator wrote it.
	unchanged bool
	// finished marks an entry whose final object is set and checked (Engine.finish);
	// settled one handed to the planner's settled function.
	finished, settled bool
	// guestSA is the standalone service account a pod-bearing object placed on the
	// management cluster acts as on the guest (RuleGuestIdentity); nil otherwise.
	guestSA *saKey
	// droppedTokens are the token Secrets of guest identities in the workload's standalone
	// namespace that the plan does not write (RuleGuestIdentity): its pods do not mount them.
	// One value per namespace, shared by its workloads.
	droppedTokens *droppedSecrets
	// tokenless marks the renamed service account of RuleGuestIdentity on the management
	// cluster: its token is not mounted into pods.
	tokenless bool
	// facts are what the scope check reads of the final object (scope.ReadFacts), read from
	// its tree before the tree goes; nil where it reads nothing or the tree was not built.
	facts *scope.Facts
	// spilledLate is, for an entry the plan-wide rewrite settled and spilled, its place
	// among those (Planner.late) plus one; 0 for the others.
	spilledLate int
	// treeBuf is the memory of final when rewriteBody built it from src (releaseTree).
	treeBuf *yamlnode.TreeBuffer
}

// Plan translates every mutation of out, and the Deletes recovered from its
// controller-results.yaml (RuleRecoveredDelete). Mutations that may not be written are
// rejected entries, not errors; check Plan.Rejected before applying.
func (e Engine) Plan(out *contract.OutputDir) *plans.Plan {
	p := e.Planner(nil)
	// Without a settled function, Add only places: each mutation is placed on its own, on
	// every core.
	p.works = make([]*work, len(out.Mutations))
	parallel.ForEach(len(out.Mutations), func(i int) { p.works[i] = p.e.place(&out.Mutations[i]) })
	for _, w := range p.works {
		p.writes.Check(w)
		p.recovery.Note(w.m, w.entry.Source, w.src)
	}
	p.AddControllerResults(out.ControllerResults)
	return p.Plan()
}

// guestNamespaces returns the entries that create on the guest the namespaces that the
// operator's guest objects live in but that the management side absorbs: in standalone one
// Namespace served both. Each is the operator's own Namespace object when the plan holds
// it, else a bare Namespace of that name when the operator declares it as a Management or
// Configuration output (it exists before the operator runs) or a guest identity's service
// account lives in it (RuleGuestIdentity), created on the guest (RuleGuestNamespace) where
// it is missing.
func (e Engine) guestNamespaces(works []*work) []*work {
	absorbed := map[string]*work{}
	onGuest := map[string]bool{}
	for _, w := range works {
		id := w.entry.Source
		if !id.IsNamespace() {
			continue
		}
		switch {
		case w.entry.Disposition == routing.Absorbed && w.src != nil:
			absorbed[id.Name] = w
		case w.entry.Disposition == routing.Apply && w.entry.Target.Cluster == routing.ClusterGuest:
			onGuest[id.Name] = true
		}
	}
	var out []*work
	for _, w := range works {
		ns := w.entry.Source.Namespace
		if w.entry.Disposition != routing.Apply || w.entry.Target.Cluster != routing.ClusterGuest || ns == "" || onGuest[ns] {
			continue
		}
		from := absorbed[ns]
		if from == nil {
			from = e.declaredAbsorbedNamespace(ns)
		}
		if from == nil && w.entry.Rule == guestidentity.Rule {
			// A guest identity's service account needs its namespace on the guest, whether
			// or not the operator writes or declares it.
			from = bareNamespace(ns)
		}
		if from == nil {
			continue
		}
		onGuest[ns] = true
		m := *from.m
		m.Class = contract.ClassUserWorkload
		// Create, as the operator's own client would: where the namespace exists already
		// (the guest's installer made it), it is left as it is.
		m.Metadata.Action, m.Metadata.FieldManager, m.Metadata.PatchType = contract.ActionCreate, "", ""
		out = append(out, &work{m: &m, src: from.src, obj: from.obj, entry: plans.Entry{
			Operator: e.Operator, Class: m.Class, Action: m.Metadata.Action, Source: from.entry.Source,
			Target:      plans.Target{Cluster: routing.ClusterGuest, Identity: from.entry.Source},
			Disposition: routing.Apply, Rule: plans.RuleGuestNamespace,
			Reason:     fmt.Sprintf("%s is absorbed on the management cluster, but %s lives in it on the guest", ns, w.entry.Source.String()),
			Transforms: []string{}, Warnings: []string{}, SourcePath: from.m.Path,
		}})
	}
	return out
}

// declaredAbsorbedNamespace returns a bare Namespace object of that name, as work, when the
// operator declares it as a Management or Configuration output and the routing table
// absorbs it on the management side; nil otherwise.
func (e Engine) declaredAbsorbedNamespace(name string) *work {
	id := contract.Identity{Version: "v1", Resource: "namespaces", Name: name}
	declared := func(o *contract.OutputResources) bool {
		return o != nil && (o.ManagementResources.Matches(id) || o.ConfigurationResources.Matches(id))
	}
	if !declared(e.Declared) && !declared(e.Supplement) {
		return nil
	}
	if d := e.Router.Route(routing.Object{Class: contract.ClassManagement, Identity: id}); d.Disposition != routing.Absorbed {
		return nil
	}
	return bareNamespace(name)
}

// bareNamespace returns a Namespace object of that name and nothing else, as work.
func bareNamespace(name string) *work {
	id := contract.Identity{Version: "v1", Resource: "namespaces", Name: name}
	src := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	m := &contract.Mutation{Class: contract.ClassManagement, Object: src}
	m.Metadata.Action = contract.ActionCreate
	m.Metadata.SetIdentity(id)
	return &work{m: m, src: src, entry: plans.Entry{Source: id}}
}

// place decides a mutation's disposition, target cluster and target identity.
func (e Engine) place(m *contract.Mutation) *work {
	src := m.Identity()
	w := &work{m: m, entry: plans.Entry{
		Operator: e.Operator, Class: m.Class, Action: m.Metadata.Action, Source: src,
		Transforms: []string{}, Warnings: []string{}, SourcePath: m.Path,
	}}
	if m.Metadata.Action.CarriesObject() {
		w.src = m.Object
		if w.src == nil {
			// A mutation built in memory: the reader parses what it reads.
			obj, err := contract.ParseObject(m.Body)
			if err != nil {
				return w.reject(plans.RuleBody, fmt.Sprintf("parse body: %v", err))
			}
			w.src = &unstructured.Unstructured{Object: obj}
		}
	}
	if m.Class == contract.ClassUnspecified {
		classes := e.Supplement.ClassesOf(src)
		if len(classes) == 0 {
			return w.reject(plans.RuleUnspecified, "the operator wrote it under Unspecified: it matched no declared output resource (operators[].supplements.outputs can declare it)")
		}
		w.entry.Class, w.entry.DeclaredBy = classes[0], plans.DeclaredBySupplement
	}
	switch class := w.entry.Class; {
	case w.entry.DeclaredBy != "":
	case e.Declared == nil || e.Declared.ForClass(class).Matches(src):
	case e.Supplement != nil && e.Supplement.ForClass(class).Matches(src):
		w.entry.DeclaredBy = plans.DeclaredBySupplement
	case e.Policy != nil && policy.IsPrivileged(src.GroupResource()):
		return w.reject(policy.RulePrivilegedObject, fmt.Sprintf("%s is privileged (it changes what the API server serves or admits) and not declared in the %s output-resources", src, class))
	default:
		return w.reject(plans.RuleDeclaredOutputs, fmt.Sprintf("%s is not declared in the %s output-resources", src, class))
	}
	d := e.Router.Route(w.object())
	w.entry.Disposition, w.entry.Rule, w.entry.Reason = d.Disposition, d.Rule, d.Reason
	w.entry.Target.Cluster = d.Cluster
	if d.Disposition != routing.Apply && d.Disposition != routing.Absorbed {
		return w
	}
	target, err := e.Names.ToTarget(d.Cluster, src)
	if err != nil {
		return w.reject(plans.RuleNameMapping, err.Error())
	}
	w.entry.Target.Identity = target
	e.dropStandaloneNode(w)
	return w
}

// The engine's work is what its checks read (check.Write).
var _ check.Write = (*work)(nil)

// Entry returns the entry on its way to the plan.
func (w *work) Entry() *plans.Entry { return &w.entry }

// Mutation returns the mutation as the operator recorded it.
func (w *work) Mutation() *contract.Mutation { return w.m }

// Source returns the object as the operator wrote it; nil for patches and deletes.
func (w *work) Source() *unstructured.Unstructured { return w.source() }

// Tree returns the operator's object as a YAML tree (tree).
func (w *work) Tree() *yaml.RNode { return w.tree() }

// Final returns the object as it will be written, as a YAML tree (finalTree).
func (w *work) Final() *yaml.RNode { return w.finalTree() }

// Edit returns the final tree to change in place, a copy of the operator's object when the
// entry wrote it unchanged.
func (w *work) Edit() *yaml.RNode {
	if w.final == nil {
		w.final, w.unchanged = w.tree().Copy(), false
	}
	return w.final
}

// Reject refuses the entry (reject).
func (w *work) Reject(rule, reason string) { w.reject(rule, reason) }

func (w *work) reject(rule, reason string) *work {
	w.entry.Disposition, w.entry.Rule, w.entry.Reason = routing.Rejected, rule, reason
	w.entry.Target = plans.Target{}
	w.entry.Mutation = nil
	w.entry.Object = nil
	w.entry.Changes = nil
	w.final, w.unchanged = nil, false
	return w
}

func (w *work) object() routing.Object {
	o := routing.Object{Class: w.entry.Class, Identity: w.entry.Source}
	if src := w.source(); src != nil {
		o.Labels = src.GetLabels()
	}
	return o
}

// tree returns src as a YAML tree, building it when first asked; nil when the action carries
// no object. It is the operator's object: callers that change it copy it first.
func (w *work) tree() *yaml.RNode {
	if src := w.source(); w.obj == nil && src != nil {
		w.obj = yamlnode.TreeOf(src.Object)
	}
	return w.obj
}

// readTree returns src as a YAML tree for a caller that reads it once: the tree tree built
// when there is one, else one built for the caller alone and not kept, so that a plan-wide
// stage reading every object of a kind (the bindings, the service accounts) does not hold
// their trees until the rewrite. nil when the action carries no object.
func (w *work) readTree() *yaml.RNode {
	src := w.source()
	if w.obj != nil || src == nil {
		return w.obj
	}
	return yamlnode.TreeOf(src.Object)
}

// ownTree returns a tree of src that the caller may change: a copy of the tree tree built,
// or one built for the caller alone.
func (w *work) ownTree() *yaml.RNode {
	if w.obj != nil {
		return yaml.NewRNode(yamlnode.CopyTree(w.obj.YNode()))
	}
	return w.readTree()
}

// finalTree returns the target object of an apply entry as a YAML tree: the rewritten one,
// or the operator's own when it is written unchanged; nil when there is none.
func (w *work) finalTree() *yaml.RNode {
	if w.final == nil && w.unchanged {
		return w.tree()
	}
	return w.final
}

// objectKey names an object regardless of version.
type objectKey struct {
	cluster, group, resource, namespace, name string
}

func keyOf(cluster string, id contract.Identity) objectKey {
	return objectKey{cluster, id.Group, id.Resource, id.Namespace, id.Name}
}

// placements are where the plan's sources land (checkCollisions' index) and, learnt while
// the entries are rewritten (on every core), where the objects outside the plan that they
// name are expected.
type placements struct {
	index   map[objectKey]placed
	outside sync.Map // objectKey -> outsideTarget
}

// placed is where a source object lands.
type placed struct {
	cluster string
	target  contract.Identity
}

// onCluster prefixes the cluster of the index keys of sources by the cluster they land on.
const onCluster = "@"

// checkCollisions rejects mutations of distinct sources that land on the same target, and
// returns the index from standalone object (cluster "") to where it lands.
func (e Engine) checkCollisions(works []*work) map[objectKey]placed {
	bySource := make(map[objectKey]placed, 2*len(works))
	byTarget := make(map[objectKey]contract.Identity, len(works))
	for _, w := range works {
		d := w.entry.Disposition
		if (d != routing.Apply && d != routing.Absorbed) || w.entry.Source.Name == "" {
			continue
		}
		if d == routing.Absorbed {
			bySource[keyOf("", w.entry.Source)] = placed{w.entry.Target.Cluster, w.entry.Target.Identity}
			continue
		}
		tk := keyOf(w.entry.Target.Cluster, w.entry.Target.Identity)
		if other, ok := byTarget[tk]; ok && keyOf("", other) != keyOf("", w.entry.Source) {
			w.reject(plans.RuleNameMapping, fmt.Sprintf("%s would land on %s, where %s lands too", w.entry.Source, w.entry.Target.Identity, other))
			continue
		}
		byTarget[tk] = w.entry.Source
		bySource[keyOf("", w.entry.Source)] = placed{w.entry.Target.Cluster, w.entry.Target.Identity}
		// A source may land on both clusters (a service account under RuleGuestIdentity): a
		// reference resolves to the one on the referrer's cluster first.
		bySource[keyOf(onCluster+w.entry.Target.Cluster, w.entry.Source)] = placed{w.entry.Target.Cluster, w.entry.Target.Identity}
	}
	return bySource
}

// rewrite builds the target mutation of an apply entry: identity, references, annotations and
// transforms in the body of object-bearing actions, metadata for all. It records the final
// object and every change made to it in the entry.
func (e Engine) rewrite(w *work, places *placements) {
	src := w.source() // parsed again, where it was parked
	if w.entry.Disposition != routing.Apply {
		return // the parked body did not parse again
	}
	tm := *w.m
	tm.Class = w.entry.Class // a mutation written under Unspecified, placed by the supplement
	tm.Metadata.SetIdentity(w.entry.Target.Identity)
	tm.Path, tm.Prefix = "", ""
	if src == nil || (!e.composed.bodies && w.entry.Target.Identity == w.entry.Source) {
		if tm.Metadata.Identity() == w.m.Identity() {
			tm.Prefix = w.m.Prefix // nothing changed: keep the file name too
		}
		w.entry.Mutation = &tm
		w.unchanged = src != nil
		return
	}
	obj, err := e.rewriteBody(w, places)
	if err != nil {
		w.reject(plans.RuleBody, err.Error())
		return
	}
	// The body is written when a writer needs it (contract.Mutation.Bytes): an applier
	// writes the object.
	tm.Body, tm.Object = nil, nil
	w.entry.Mutation = &tm
	w.final = obj
}

// setIdentity writes the target identity into the body: apiVersion (a shadow group), kind (a
// ClusterRole that became a Role), namespace and name, and the namespace of a pod template.
// It returns the changes it made; rule is the routing rule that placed the object.
func (e Engine) setIdentity(obj *yaml.RNode, src, target contract.Identity, rule string) ([]plans.Change, error) {
	var changes []plans.Change
	set := func(path []string, to string, kind, by, detail string, write func() error) error {
		var from any
		if old, ok := yamlnode.StringAt(obj, path...); ok {
			if old == to {
				return nil
			}
			from = old
		}
		if err := write(); err != nil {
			return err
		}
		changes = append(changes, plans.Change{Path: yamlnode.Pointer(path), From: from, To: to, By: by, Kind: kind, Detail: detail})
		return nil
	}
	if target.Group != src.Group {
		gv := schema.GroupVersion{Group: target.Group, Version: target.Version}.String()
		kind := plans.ChangeConverted
		if orig, ok := namespaces.IsShadowGroup(target.Group); ok && orig == src.Group {
			kind = plans.ChangeShadowed
		}
		if err := set([]string{"apiVersion"}, gv, kind, plans.ByNamespaces, src.Group+" -> "+target.Group, func() error {
			return yamlnode.SetString(obj, yaml.NewStringRNode(gv).YNode(), "apiVersion")
		}); err != nil {
			return nil, err
		}
	}
	if target.Resource != src.Resource {
		kind, ok := e.Discovery.KindFor(target.GroupVersionResource())
		if !ok {
			return nil, fmt.Errorf("no kind known for %s", target.GroupVersionResource())
		}
		if err := set([]string{"kind"}, kind, plans.ChangeConverted, rule, src.Resource+" -> "+target.Resource, func() error {
			return yamlnode.SetString(obj, yaml.NewStringRNode(kind).YNode(), "kind")
		}); err != nil {
			return nil, err
		}
	}
	if target.Namespace != src.Namespace {
		if err := set([]string{"metadata", "namespace"}, target.Namespace, plans.ChangeRenamed, plans.ByNamespaces, detailRenamed, func() error {
			if target.Namespace == "" {
				return obj.SetNamespace("")
			}
			return yamlnode.SetString(obj, &yaml.Node{Kind: yaml.ScalarNode, Value: target.Namespace}, "metadata", "namespace") // as SetNamespace
		}); err != nil {
			return nil, err
		}
		sites, err := podspec.SitesIn(obj)
		if err != nil {
			return nil, err
		}
		for _, site := range sites {
			m, ok := site.Metadata()
			metaPath, plain := m.AsKeys()
			if !ok || !plain {
				continue // a template inside a list: its namespace, if any, is left to the API server's checks
			}
			meta, err := yamlnode.Lookup(obj, metaPath...)
			if err == nil && meta != nil && meta.Field("namespace") != nil {
				if err := set(append(metaPath, "namespace"), target.Namespace, plans.ChangeRenamed, plans.ByNamespaces, detailRenamed, func() error {
					return yamlnode.SetString(meta, yaml.NewStringRNode(target.Namespace).YNode(), "namespace")
				}); err != nil {
					return nil, err
				}
			}
		}
	}
	if target.Name != src.Name {
		if err := set([]string{"metadata", "name"}, target.Name, plans.ChangeRenamed, plans.ByNamespaces, detailRenamed, func() error {
			return yamlnode.SetString(obj, &yaml.Node{Kind: yaml.ScalarNode, Value: target.Name}, "metadata", "name") // as SetName
		}); err != nil {
			return nil, err
		}
	}
	if target.GenerateName != src.GenerateName {
		if err := set([]string{"metadata", "generateName"}, target.GenerateName, plans.ChangeRenamed, plans.ByNamespaces, detailRenamed, func() error {
			return yamlnode.SetString(obj, yaml.NewStringRNode(target.GenerateName).YNode(), "metadata", "generateName")
		}); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

// Details of the engine's own changes.
const (
	detailRenamed  = "simulated namespace"
	detailRecorded = "the standalone identity and the operator, for the inverse mapping"
)

// eachWork runs f on every work, as parallel.ForEach does.
func eachWork(works []*work, f func(*work)) {
	parallel.ForEach(len(works), func(i int) { f(works[i]) })
}

// Declarations proposes, from a plan the engine made, the configuration snippet that would
// place what it refused for want of a declaration (package declare), for a person to review.
func (e Engine) Declarations(p *plans.Plan) *declare.Declarations {
	return declare.Proposer{
		Operator: e.Operator, Router: e.Router, Names: e.Names, Declared: e.Declared,
		Supplement: e.Supplement, Policy: e.Policy, Containment: e.Containment,
	}.Declarations(p)
}

// dropStandaloneNode drops w when the engine places it on the management cluster of a
// hosted control plane and it is standalone-node machinery (package nodemachinery).
func (e Engine) dropStandaloneNode(w *work) bool {
	if e.HCPNamespace == "" || w.entry.Target.Cluster != routing.ClusterManagement || w.entry.Disposition != routing.Apply {
		return false
	}
	why := nodemachinery.Why(w)
	if why == "" {
		return false
	}
	w.entry.Disposition, w.entry.Rule, w.entry.Reason = routing.Dropped, nodemachinery.Rule, why
	w.entry.Target = plans.Target{}
	return true
}
