package translate

import (
	"sync"

	"github.com/topolayer/topolayer/internal/translate/internal/yamlnode"
	"github.com/topolayer/topolayer/internal/translate/plans"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

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

// arenas are the node arenas of the snapshots no rewrite uses at the moment.
var arenas = sync.Pool{New: func() any { return &yamlnode.Arena{} }}
