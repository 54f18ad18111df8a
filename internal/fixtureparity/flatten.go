package fixtureparity

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/topolayer/topolayer/internal/translate/parity"
	sigsyaml "sigs.k8s.io/yaml"
)

// listKeys are the fields whose elements Kubernetes merges by a key other than name.
var listKeys = map[string]string{"volumeMounts": "mountPath", "volumeDevices": "devicePath"}

// Flatten returns the leaf fields of a JSON value by path: scalars, and empty maps and lists
// (an emptyDir: {} is a field of its own). Map keys that are identifiers are fields
// (".spec"), others are bracketed ("[app.kubernetes.io/name]"); a list whose elements all
// carry a distinct string key is keyed by it ("[name=oauth-openshift]"; volume mounts by
// mountPath), any other by index ("[0]").
func Flatten(v any) map[string]any {
	out := map[string]any{}
	flatten("", "", v, out)
	return out
}

func flatten(path, field string, v any, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			out[path] = v
			return
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			flatten(parity.ChildPath(path, k), k, v[k], out)
		}
	case []any:
		if len(v) == 0 {
			out[path] = v
			return
		}
		key := listKeys[field]
		if key == "" {
			key = "name"
		}
		if names, ok := keyedBy(v, key); ok {
			for i, e := range v {
				flatten(fmt.Sprintf("%s[%s=%s]", path, key, names[i]), "", e, out)
			}
			return
		}
		for i, e := range v {
			flatten(path+"["+strconv.Itoa(i)+"]", "", e, out)
		}
	default:
		out[path] = v
	}
}

// keyedBy returns each element's key when every element is a map with a distinct string key.
func keyedBy(list []any, key string) ([]string, bool) {
	names := make([]string, len(list))
	seen := map[string]bool{}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		s, ok := m[key].(string)
		if !ok || seen[s] {
			return nil, false
		}
		seen[s] = true
		names[i] = s
	}
	return names, true
}

// parseDocument reads a data key's document (YAML or JSON); a value that is no string, or
// not a map or list, stays as it is.
func parseDocument(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	var doc any
	if err := sigsyaml.Unmarshal([]byte(s), &doc); err != nil {
		return v
	}
	switch doc.(type) {
	case map[string]any, []any:
		return doc
	}
	return v
}

// render prints a leaf value: a string as it is, the rest as compact JSON; numbers print
// alike whether they were read as integers or floats.
func render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// display prints a leaf value for a report line: strings quoted, "(absent)" for none.
func display(v any, has bool) string {
	if !has {
		return "(absent)"
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return render(v)
}
