package translate

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Stage is one step of the rewrite of an entry's object, as a kio filter is one step of a
// kustomize pipeline: the engine runs the stage list the topology composed (Engine.Stages),
// in order, over every object it rewrites. A stage reads what its context hands it and
// changes the object only through the context's Edit or Diff, which is how the engine keeps
// the changes of every stage apart; it returns the changes it made, each naming the rule
// that made it (Change.By).
type Stage interface {
	// Name names the stage in errors and documentation.
	Name() string
	// Rewrite changes c.Object() and returns its changes; none when the stage does not apply
	// to the entry.
	Rewrite(c *StageContext) ([]plans.Change, error)
}

// BodyStage is a Stage that changes objects whatever their placement (recorded source
// annotations, a transform). The engine rewrites only the objects placement renamed unless
// its stage list has one.
type BodyStage interface {
	Stage
	// ChangesBodies reports whether the stage changes objects that keep their identity.
	ChangesBodies() bool
}

// StageContext is what a stage may read and change while one entry is rewritten: the entry
// (its source, target, rule and the changes so far), its object as the stages before left
// it, the plan-wide placement of every source (Resolve), the engine's configuration (the
// name mapper, discovery, the policy, the hosted control plane). The engine makes one per
// rewrite.
type StageContext struct {
	engine  *Engine
	w       *work
	obj     *yaml.RNode
	snap    snapshot
	renamer *renamer
	// flushed is how many of the renamer's warnings the entry already holds.
	flushed int
	// source is what Source returns once sourced is set.
	source  transform.Context
	sourced bool
	// scratch is the buffer Scratch hands out, reused from stage to stage and rewrite to
	// rewrite.
	scratch []plans.Change
}

// stageContexts are the contexts no rewrite uses at the moment: a rewrite allocates none.
var stageContexts = sync.Pool{New: func() any { return &StageContext{} }}

// Entry returns the entry being rewritten: its source and target identities, the rule that
// placed it, the changes and warnings so far. A stage reads it; Warn adds to its warnings.
func (c *StageContext) Entry() *plans.Entry { return &c.w.entry }

// Object returns the object as the stages before this one left it. A stage changes it only
// inside Edit or Diff.
func (c *StageContext) Object() *yaml.RNode { return c.obj }

// Status reports whether the entry writes the status of its object (the reference stages
// rewrite only the status references, and the stages of the body do nothing).
func (c *StageContext) Status() bool { return c.w.m.Metadata.Action.IsStatus() }

// Source returns the entry's standalone identity, labels and class, as routing matches them.
func (c *StageContext) Source() transform.Context {
	if !c.sourced {
		c.source = transform.Context{Source: c.w.object(), Cluster: c.w.entry.Target.Cluster, HCPNamespace: c.engine.HCPNamespace, HostedControlPlane: c.engine.HostedControlPlane, Operator: c.engine.Operator}
		c.sourced = true
	}
	return c.source
}

// Scratch returns an empty slice a stage may build the changes it returns in: the engine
// copies them into the entry before the next stage, which gets the same buffer.
func (c *StageContext) Scratch() []plans.Change { return c.scratch[:0] }

// Names returns the topology's name mapper.
func (c *StageContext) Names() namespaces.Mapper { return c.engine.Names }

// Discovery returns what the engine knows of kinds and resources.
func (c *StageContext) Discovery() *contract.Discovery { return c.engine.Discovery }

// Policy returns the operator's policy; nil checks nothing.
func (c *StageContext) Policy() *policy.Policy { return c.engine.Policy }

// Operator names the operator whose outputs are translated.
func (c *StageContext) Operator() string { return c.engine.Operator }

// Resolve returns where a standalone object the entry refers to lands on the entry's
// cluster: the plan's own placement of it, or the topology's name mapping of an object
// outside the plan (with a warning on the entry). False when it lands elsewhere or cannot be
// mapped.
func (c *StageContext) Resolve(gk schema.GroupKind, namespace, name string) (contract.Identity, bool) {
	target, _, ok := c.renamer.resolve(gk, namespace, name)
	return target, ok
}

// Warn adds a warning to the entry.
func (c *StageContext) Warn(msgs ...string) {
	c.w.entry.Warnings = append(c.w.entry.Warnings, msgs...)
}

// Edit runs edit, which changes the object and knows its own changes (the stage returns
// them).
func (c *StageContext) Edit(edit func(obj *yaml.RNode) error) error {
	c.snap.touched()
	return edit(c.obj)
}

// Diff runs edit, which changes the object or returns the one that replaces it, and returns
// the changes it made, found by comparing the object before and after, attributed to by as
// changes of kind.
func (c *StageContext) Diff(by, kind string, edit func(obj *yaml.RNode) (*yaml.RNode, error)) ([]plans.Change, error) {
	before := c.snap.before(c.obj.YNode())
	out, err := edit(c.obj)
	if err != nil {
		return nil, err
	}
	if out != nil {
		c.obj = out
	}
	return c.snap.diff(before, c.obj.YNode(), by, kind), nil
}

// flushWarnings moves to the entry the warnings the renamer gave since the last flush.
func (c *StageContext) flushWarnings() {
	if len(c.renamer.warnings) > c.flushed {
		c.Warn(c.renamer.warnings[c.flushed:]...)
		c.flushed = len(c.renamer.warnings)
	}
}

// composition is what the engine learns once from its stage list.
type composition struct {
	// bodies says a stage changes objects that keep their identity (BodyStage).
	bodies bool
	// records says the list records the standalone identity on every object.
	records bool
	// adds are the transforms that add objects beside those they select (Transform.Adds).
	adds []transform.Transform
}

func compose(stages []Stage) composition {
	var c composition
	for _, s := range stages {
		if b, ok := s.(BodyStage); ok && b.ChangesBodies() {
			c.bodies = true
		}
		if _, ok := s.(RecordSource); ok {
			c.records = true
		}
		if t, ok := s.(TransformStage); ok && t.Transform.Adds != nil {
			c.adds = append(c.adds, t.Transform)
		}
	}
	return c
}

// rewriteBody returns the target object of an entry, running the engine's stages over it in
// order, and records in the entry each change they made.
func (e *Engine) rewriteBody(w *work, places *placements) (*yaml.RNode, error) {
	// The object is the operator's built afresh. When an earlier step built the operator's
	// tree (w.obj), it is its copy and that tree is the first snapshot; otherwise the snapshot
	// copies it before the first stage that diffs.
	c := stageContexts.Get().(*StageContext)
	c.engine, c.w = e, w
	defer func() {
		c.snap.release()
		scratch := c.scratch[:0]
		clear(c.scratch[:cap(c.scratch)])
		*c = StageContext{scratch: scratch}
		stageContexts.Put(c)
	}()
	if w.obj != nil {
		c.obj, c.snap.copy = yaml.NewRNode(yamlnode.CopyTree(w.obj.YNode())), w.obj.YNode()
	} else {
		// The tree becomes the entry's final one, which finish drops: its memory goes back
		// then (releaseTree).
		w.treeBuf = treeBuffers.Get().(*yamlnode.TreeBuffer)
		c.obj = w.treeBuf.TreeOf(w.src.Object)
	}
	if w.entry.Changes == nil && e.composed.records {
		// The identity, the source annotations and the operator label are most of an
		// object's changes.
		w.entry.Changes = make([]plans.Change, 0, 10)
	}
	c.renamer = &renamer{engine: *e, from: w.entry.Target.Cluster, referrer: w.entry.Source}
	if places != nil {
		c.renamer.index, c.renamer.outside = places.index, &places.outside
	}
	for _, s := range e.Stages {
		changes, err := s.Rewrite(c)
		if err != nil {
			return nil, err
		}
		w.entry.Changes = append(w.entry.Changes, changes...)
		if cap(changes) > cap(c.scratch) {
			c.scratch = changes // a stage built its changes in a larger buffer: keep it
		}
	}
	return c.obj, nil
}

// snapshot is a copy of an object being rewritten, as it was before the step that is about to
// change it, for diffNodes to record that step's changes. Most steps change nothing, and those
// that do change little: the snapshot is brought up to date by copying only the subtrees of
// the object that differ from it.
type snapshot struct {
	copy *yaml.Node
	// arena holds the nodes of the snapshot's own copies; release hands it to the next
	// rewrite.
	arena *yamlnode.Arena
	// own says the snapshot may be changed: it is not the operator's tree it starts as.
	own bool
	// synced says the object has not changed since before last returned copy: nothing to
	// bring up to date. Steps that change the object and record their own changes, without
	// before and diff, call touched.
	synced bool
}

// touched says the object may have changed since the last before.
func (s *snapshot) touched() { s.synced = false }

// before returns a tree identical to obj as it is now (identical), disjoint from it, for the
// next step to be diffed against; the caller does not change it.
func (s *snapshot) before(obj *yaml.Node) *yaml.Node {
	switch {
	case s.synced:
	case s.own:
		s.copy = s.arena.Sync(s.copy, obj)
	case s.copy == nil || !yamlnode.Identical(s.copy, obj):
		if s.arena == nil {
			s.arena = arenas.Get().(*yamlnode.Arena)
		}
		s.copy, s.own = s.arena.Copy(obj), true
	}
	s.synced = true
	return s.copy
}

// release ends the snapshot: its copies are dropped (nothing outside the rewrite holds them:
// the changes diffs record are values of their own) and their arena goes back for the next
// snapshot.
func (s *snapshot) release() {
	if s.arena != nil {
		s.arena.Reset()
		arenas.Put(s.arena)
	}
	s.copy, s.arena, s.own, s.synced = nil, nil, false, false
}

// diff returns the changes of a step, as diffNodes does, from before (what before returned)
// to obj: none, without a diff, when obj is still identical to it.
func (s *snapshot) diff(before, obj *yaml.Node, by, kind string) []plans.Change {
	if yamlnode.Identical(before, obj) {
		return nil
	}
	s.synced = false
	return plans.Diff(before, obj, by, kind)
}

// treeBuffers are the memory of the final trees no entry holds at the moment.
var treeBuffers = sync.Pool{New: func() any { return &yamlnode.TreeBuffer{} }}

// releaseTree hands the memory of w's final tree, when rewriteBody built it, to the next
// rewrite: finish calls it once the tree is dropped and nothing holds a node of it.
func (w *work) releaseTree() {
	if w.treeBuf != nil {
		w.treeBuf.Reset()
		treeBuffers.Put(w.treeBuf)
		w.treeBuf = nil
	}
}

// arenas are the node arenas of the snapshots no rewrite uses at the moment.
var arenas = sync.Pool{New: func() any { return &yamlnode.Arena{} }}

// holdOnce keeps one form of an object-bearing entry's object while a streaming planner
// holds it for the plan-wide stages, for an engine with body stages: those rewrite every
// object from its parsed form, and the planner's settled function writes only what the
// rewrite made, so the body file's bytes are not read for themselves. An entry that no
// plan-wide stage reads (parkable) keeps the bytes, the smaller form, and is parsed again
// when it is rewritten (source); any other keeps the parsed object. The metadata file as
// read goes too when the plan never writes it again: the entry writes nothing, or writes
// under another identity, whose metadata is encoded anew.
func (e Engine) holdOnce(w *work) {
	if w.entry.Disposition != routing.Apply || w.entry.Target.Identity != w.entry.Source {
		w.m.ForgetMetadataFile()
	}
	switch {
	case w.src == nil:
	case e.parkable(w):
		w.src, w.m.Object, w.parked = nil, nil, true
	default:
		w.m.Body = nil
	}
}

// parkable reports whether the stages that read the whole plan before the rewrite read
// nothing of w's object: it is no RBAC object, Secret, ServiceAccount or Namespace (the guest
// identity, guest subject and guest namespace stages read those), has no pod spec
// (placeGuestIdentities reads every pod spec) and no transform adds an object beside it
// (addedWorks). Those stages pass over an entry without src, as over one without an object.
func (e Engine) parkable(w *work) bool {
	src := w.entry.Source
	switch {
	case w.entry.Disposition != routing.Apply || w.obj != nil || len(w.m.Body) == 0:
		return false
	case src.Group == policy.GroupRBAC:
		return false
	case src.Group == "" && (src.Resource == "secrets" || src.Resource == "serviceaccounts" || src.Resource == "namespaces"):
		return false
	}
	if sites, err := podspec.SitesOf(w.src); err != nil || len(sites) > 0 {
		return false
	}
	for _, t := range e.composed.adds {
		for _, cluster := range []string{routing.ClusterManagement, routing.ClusterGuest} {
			if t.Selects(w.object(), cluster) {
				return false
			}
		}
	}
	return true
}

// source returns the operator's object, parsing the body again where it was parked
// (holdOnce); nil for patches and deletes. The bytes parsed when they were read, so they
// parse again; should they not, the entry is rejected.
func (w *work) source() *unstructured.Unstructured {
	if !w.parked {
		return w.src
	}
	w.parked = false
	obj, err := contract.ParseObject(w.m.Body)
	if err != nil {
		w.reject(plans.RuleBody, fmt.Sprintf("parse body again: %v", err))
		return nil
	}
	w.src = &unstructured.Unstructured{Object: obj}
	w.m.Body, w.m.Object = nil, w.src
	return w.src
}
