package transform

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/golden"
)

// tableKinds are the kinds of the pod-bearing resources (podspec.PodBearingResources) whose
// merge strategies liststrategies.json holds.
var tableKinds = []string{"CronJob", "DaemonSet", "Deployment", "Job", "Pod", "ReplicaSet", "StatefulSet"}

// TestListStrategiesTable reads the table of liststrategies.json from kyaml's built-in schema
// and compares it with the embedded one; -update rewrites it (after a kyaml upgrade).
func TestListStrategiesTable(t *testing.T) {
	table, err := readStrategyTable(tableKinds)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Types) < len(tableKinds) {
		t.Fatalf("kyaml's schema has %d of the %d kinds: %v", len(table.Types), len(tableKinds), slices.Sorted(maps.Keys(table.Types)))
	}
	got, err := json.MarshalIndent(table, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	golden.File(t, "liststrategies.json", append(got, '\n'), "go test ./internal/translate/transform -run TestListStrategiesTable -update")
}

// TestTableStrategyMatchesSchema asks the table and kyaml's schema the same questions: every
// path the schema gives a merge strategy, the paths beside and under them, map values, and
// types the table does not cover.
func TestTableStrategyMatchesSchema(t *testing.T) {
	table, err := strategies()
	if err != nil {
		t.Fatal(err)
	}
	type question struct {
		apiVersion, kind string
		path             []string
	}
	var questions []question
	for typ, root := range table.Types {
		var apiVersion, kind string
		if _, err := fmt.Sscanf(typ, "%s %s", &apiVersion, &kind); err != nil {
			t.Fatalf("%q: %v", typ, err)
		}
		var walk func(n *strategyNode, path []string)
		walk = func(n *strategyNode, path []string) {
			questions = append(questions,
				question{apiVersion, kind, path},
				question{apiVersion, kind, append(slices.Clone(path), "notAField")},
				question{apiVersion, kind, append(slices.Clone(path), "[]")})
			for name, c := range n.Fields {
				walk(c, append(slices.Clone(path), name))
			}
			if n.Values != nil {
				walk(n.Values, append(slices.Clone(path), "any-key"))
			}
			if n.Elements != nil {
				walk(n.Elements, append(slices.Clone(path), "[]"))
			}
		}
		walk(root, nil)
	}
	questions = append(questions,
		question{"apps/v1beta1", "Deployment", []string{"spec", "template", "spec", "containers"}},
		question{"example.com/v1", "Pod", []string{"spec", "containers"}},
		question{"", "Pod", []string{"spec", "containers"}},
		question{"v1", "", []string{"spec", "containers"}},
		question{"v1", "Pod", []string{"metadata", "labels", "app"}},
		question{"v1", "Pod", []string{"spec", "nodeSelector", "containers"}},
		question{"v1", "Pod", []string{"spec", "overhead", "cpu"}},
	)
	if len(questions) < 100 {
		t.Fatalf("only %d questions", len(questions))
	}
	for _, q := range questions {
		got, covered := tableStrategy(q.apiVersion, q.kind, q.path)
		if !covered {
			if slices.Contains(tableKinds, q.kind) {
				t.Errorf("%s %s %v: the table does not cover a kind it lists", q.apiVersion, q.kind, q.path)
			}
			continue
		}
		var want strategy
		if q.apiVersion != "" && q.kind != "" {
			want = schemaStrategy(q.apiVersion, q.kind, q.path)
		}
		if got.merges != want.merges || !slices.Equal(got.keys, want.keys) {
			t.Errorf("%s %s %v: table %+v, kyaml's schema %+v", q.apiVersion, q.kind, q.path, got, want)
		}
	}
	if _, covered := tableStrategy("v1", "ConfigMap", nil); covered {
		t.Error("the table covers ConfigMap, which it does not list")
	}
}

// readStrategyTable reads the strategyTable of kinds from kyaml's built-in schema: every
// apiVersion the schema has of each kind, as openapi.SchemaForResourceType finds it.
func readStrategyTable(kinds []string) (*strategyTable, error) {
	t := &strategyTable{Schema: openapi.GetSchemaVersion(), Kinds: kinds, Types: map[string]*strategyNode{}}
	for _, name := range slices.Sorted(maps.Keys(openapi.Schema().Definitions)) {
		def := openapi.Schema().Definitions[name]
		gvks, _ := def.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			group, _ := m["group"].(string)
			version, _ := m["version"].(string)
			kind, _ := m["kind"].(string)
			if !slices.Contains(kinds, kind) {
				continue
			}
			apiVersion := version
			if group != "" {
				apiVersion = group + "/" + version
			}
			rs := openapi.SchemaForResourceType(yaml.TypeMeta{APIVersion: apiVersion, Kind: kind})
			if rs == nil {
				return nil, fmt.Errorf("%s: %s %s has no schema of its own", name, apiVersion, kind)
			}
			n, err := readStrategyNode(rs, []string{apiVersion + " " + kind}, 0)
			if err != nil {
				return nil, err
			}
			if n == nil {
				n = &strategyNode{}
			}
			t.Types[apiVersion+" "+kind] = n
		}
	}
	return t, nil
}

// readStrategyNode reads the subtree of rs that leads to a merge strategy, nil when none does,
// walking it as listStrategy does (ResourceSchema.Field and Elements).
func readStrategyNode(rs *openapi.ResourceSchema, path []string, depth int) (*strategyNode, error) {
	if depth > 32 {
		return nil, fmt.Errorf("%v: deeper than 32 fields: the schema is recursive here", path)
	}
	s := resourceStrategy(rs)
	n := &strategyNode{Merge: s.merges, Keys: s.keys}
	if len(n.Keys) == 0 {
		n.Keys = nil
	}
	if ap := rs.Schema.AdditionalProperties; ap != nil && ap.Schema != nil {
		// A key that is not a property reaches the values' schema.
		var err error
		if n.Values, err = readChild(rs.Field("\x00 not a property"), path, "*", depth); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rs.Schema.Properties)) {
		c, err := readChild(rs.Field(name), path, name, depth)
		if err != nil {
			return nil, err
		}
		if c == nil && n.Values != nil {
			c = &strategyNode{} // the property hides the values' schema
		}
		if c != nil {
			if n.Fields == nil {
				n.Fields = map[string]*strategyNode{}
			}
			n.Fields[name] = c
		}
	}
	if e := rs.Elements(); e != nil {
		var err error
		if n.Elements, err = readChild(e, path, "[]", depth); err != nil {
			return nil, err
		}
	}
	if !n.Merge && n.Fields == nil && n.Values == nil && n.Elements == nil {
		return nil, nil
	}
	return n, nil
}

// readChild reads the node under a field, value or element, nil for none.
func readChild(rs *openapi.ResourceSchema, path []string, name string, depth int) (*strategyNode, error) {
	if rs == nil {
		return nil, nil
	}
	return readStrategyNode(rs, append(slices.Clone(path), name), depth+1)
}
