package index

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/topolayer/topolayer/contract"
)

// Conflict is one object that more than one operator declares it writes (start-up) or
// wrote (run time).
type Conflict struct {
	// Identity is the standalone object.
	Identity contract.Identity
	// Operators are the operators involved, sorted.
	Operators []string
}

// String says which operators write which object.
func (c Conflict) String() string {
	return fmt.Sprintf("%s is written by %d operators: %v", c.Identity, len(c.Operators), c.Operators)
}

// DeclaredConflicts returns the objects that more than one operator declares as an exact
// output, in any class, sorted by identity.
func DeclaredConflicts(outputs map[string]*contract.OutputResources) []Conflict {
	writers := map[contract.Key]map[string]bool{}
	ids := map[contract.Key]contract.Identity{}
	for op, out := range outputs {
		for _, l := range []contract.OutputResourceList{out.ConfigurationResources, out.ManagementResources, out.UserWorkloadResources} {
			for _, e := range l.ExactResources {
				id := contract.Identity{Group: e.Group, Version: e.Version, Resource: e.Resource, Namespace: e.Namespace, Name: e.Name}
				k := id.Key()
				if writers[k] == nil {
					writers[k] = map[string]bool{}
				}
				writers[k][op] = true
				ids[k] = id
			}
		}
	}
	return conflicts(writers, ids)
}

// Writes tracks which operator last wrote each object, to find run-time conflicts: two
// operators writing the same object, whether declared or not. Not safe for concurrent use.
type Writes struct {
	by  map[contract.Key]map[string]bool
	ids map[contract.Key]contract.Identity
}

// NewWrites returns an empty tracker.
func NewWrites() *Writes {
	return &Writes{by: map[contract.Key]map[string]bool{}, ids: map[contract.Key]contract.Identity{}}
}

// Record notes that operator writes the standalone objects ids, and returns the conflicts
// this creates: the objects among ids that another operator wrote before.
func (w *Writes) Record(operator string, ids []contract.Identity) []Conflict {
	hit := map[contract.Key]map[string]bool{}
	for _, id := range ids {
		k := id.Key()
		if w.by[k] == nil {
			w.by[k] = map[string]bool{}
		}
		w.by[k][operator] = true
		w.ids[k] = id
		if len(w.by[k]) > 1 {
			hit[k] = w.by[k]
		}
	}
	return conflicts(hit, w.ids)
}

func conflicts(writers map[contract.Key]map[string]bool, ids map[contract.Key]contract.Identity) []Conflict {
	var out []Conflict
	for k, ops := range writers {
		if len(ops) < 2 {
			continue
		}
		out = append(out, Conflict{Identity: ids[k], Operators: slices.Sorted(maps.Keys(ops))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Identity.String() < out[j].Identity.String() })
	return out
}
