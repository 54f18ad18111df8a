package transform

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/openapi"
)

// listStrategiesJSON is kyaml's built-in OpenAPI schema reduced to the merge strategies of the
// pod-bearing kinds (strategyTable), written by TestListStrategiesTable from the schema itself.
//
//go:embed liststrategies.json
var listStrategiesJSON []byte

// strategyTable is what listStrategy asks of kyaml's schema, for the kinds the hypershift
// profile edits pod specs of, so that answering it does not parse the whole schema: kyaml
// parses all of it on the first question (some 30 MB allocated, a third of it kept), on the
// shared management cluster's hot path. The table is exact for its schema: every apiVersion
// the schema has of each of its kinds, and under each the tree of fields (properties, a map's
// values, a list's elements) down to every node with a merge strategy.
type strategyTable struct {
	// Schema is the version of kyaml's built-in schema the table was read from; the table
	// answers only while kyaml uses that one.
	Schema string `json:"schema"`
	// Kinds are the kinds the table covers; Types holds every apiVersion of theirs the schema
	// has, by "apiVersion kind". A covered kind of another apiVersion has no schema.
	Kinds []string                 `json:"kinds"`
	Types map[string]*strategyNode `json:"types"`
}

// strategyNode is one node of a type's schema in a strategyTable: its merge strategy and
// the nodes under it that lead to one.
type strategyNode struct {
	// Merge says the node's patch strategy includes merge; Keys are its merge keys.
	Merge bool     `json:"merge,omitempty"`
	Keys  []string `json:"keys,omitempty"`
	// Fields are the properties, Values the values of a map (the schema's
	// additionalProperties: any key that is not a property), Elements a list's elements.
	// A property under which nothing merges is kept, empty, only where Values is set, since
	// a key that is a property does not reach Values.
	Fields   map[string]*strategyNode `json:"fields,omitempty"`
	Values   *strategyNode            `json:"values,omitempty"`
	Elements *strategyNode            `json:"elements,omitempty"`
}

// strategies is the embedded table, parsed on first use.
var strategies = sync.OnceValues(func() (*strategyTable, error) {
	var t strategyTable
	if err := json.Unmarshal(listStrategiesJSON, &t); err != nil {
		return nil, fmt.Errorf("liststrategies.json: %w", err)
	}
	return &t, nil
})

// tableStrategy answers listStrategy from the embedded table, and reports false when the table
// does not cover the type (then only kyaml's schema can answer).
func tableStrategy(apiVersion, kind string, path []string) (strategy, bool) {
	t, err := strategies()
	if err != nil || t.Schema != openapi.GetSchemaVersion() {
		return strategy{}, false
	}
	n, ok := t.Types[apiVersion+" "+kind]
	if !ok {
		// A covered kind of an apiVersion the schema lacks has no strategy.
		return strategy{}, slices.Contains(t.Kinds, kind)
	}
	for _, p := range path {
		switch child, ok := n.Fields[p]; {
		case p == "[]":
			n = n.Elements
		case ok:
			n = child
		default:
			n = n.Values
		}
		if n == nil {
			return strategy{}, true
		}
	}
	return strategy{merges: n.Merge, keys: n.Keys}, true
}
