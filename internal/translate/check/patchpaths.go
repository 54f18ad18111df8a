package check

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/yamlnode"
)

// patchPaths returns the fields a patch sets or removes, each as its path's segments as the
// API server reads them, whatever the patch's spelling: a JSON patch's paths (and a move's or
// copy's from) with their pointer escapes decoded (~1 is '/'), a merge or strategic-merge
// patch's leaves with its JSON string escapes decoded (\/ is '/'). A directive of a strategic
// merge ($patch, $retainKeys, $setElementOrder/..., $deleteFromPrimitiveList/...) touches the
// whole mapping it is in. A patch that does not parse is an error: it cannot be checked.
func patchPaths(body []byte, patchType string) ([][]string, error) {
	js := body
	if !json.Valid(body) { // JSON as the API server reads it; YAML (a superset, but for escapes) else
		var err error
		if js, err = sigsyaml.YAMLToJSON(body); err != nil {
			return nil, err
		}
	}
	if patchType == contract.PatchTypeJSON {
		var ops []struct {
			Op   string  `json:"op"`
			Path *string `json:"path"`
			From *string `json:"from"`
		}
		if err := json.Unmarshal(js, &ops); err != nil {
			return nil, fmt.Errorf("a JSON patch is a list of operations: %w", err)
		}
		var out [][]string
		for i, op := range ops {
			if op.Path == nil {
				return nil, fmt.Errorf("[%d].path: required", i)
			}
			if op.Op == "test" {
				continue // a test changes nothing
			}
			out = append(out, yamlnode.PointerSegments(*op.Path))
			if op.From != nil && op.Op == "move" {
				out = append(out, yamlnode.PointerSegments(*op.From))
			}
		}
		return out, nil
	}
	var patch any
	if err := json.Unmarshal(js, &patch); err != nil {
		return nil, err
	}
	var out [][]string
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			out = append(out, slices.Clone(path))
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) { // in a stable order
			child := m[k]
			if strings.HasPrefix(k, "$") {
				out = append(out, slices.Clone(path))
				continue
			}
			walk(append(path, k), child)
		}
	}
	walk(nil, patch)
	return out, nil
}

// touches reports whether a patch that changes the fields at paths changes the field at
// field, or a field that holds it.
func touches(paths [][]string, field ...string) bool {
	for _, p := range paths {
		n := min(len(p), len(field))
		if slices.Equal(p[:n], field[:n]) {
			return true
		}
	}
	return false
}
