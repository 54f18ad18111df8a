package contract

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPlainYAML: an object of JSON's plain values is written as JSONToYAML writes its JSON,
// byte for byte; plainJSON refuses what would not be.
func TestPlainYAML(t *testing.T) {
	tests := map[string]struct {
		obj   map[string]any
		plain bool
	}{
		"empty":              {map[string]any{}, true},
		"scalars":            {map[string]any{"s": "x", "b": true, "n": nil, "i": int64(-3), "j": 7, "max": int64(math.MaxInt64), "min": int64(math.MinInt64)}, true},
		"strings that parse": {map[string]any{"a": "true", "b": "123", "c": "1.5", "d": "null", "e": "", "f": "2024-10-14T22:38:20Z", "g": "~", "h": "0x1F", "i": "yes", "j": "1e3", "k": "- x", "l": "a: b", "m": "#c", "n": " lead", "o": "trail ", "p": "*ref", "q": "&a", "r": "!tag", "s": "%x", "t": "@x", "u": "`x", "v": "{x}", "w": "[x]", "x": "'q'", "y": "\"dq\"", "z": "|"}, true},
		"multi-line":         {map[string]any{"a": "one\ntwo\n", "b": "x\n", "c": "\n", "d": "tab\there", "e": "cr\r\n", "f": "  indented\nlines"}, true},
		"escapes":            {map[string]any{"a": "<>&", "b": "\u2028\u2029", "c": "\x01\x1f", "d": "é ü 日本 🎉", "e": "\\back"}, true},
		"keys":               {map[string]any{"1": "a", "10": "b", "2": "c", "true": 1, "": "empty", "a10": 1, "a9": 2, "B": 3, "b": 4, "é": 5}, true},
		"nested":             {map[string]any{"m": map[string]any{"z": []any{"x", map[string]any{}, []any{}, nil, int64(1)}, "a": map[string]any{"k": "v"}}, "l": []any{[]any{"deep"}}}, true},
		"float":              {map[string]any{"f": 3.0}, false},
		"nil map":            {map[string]any{"m": map[string]any(nil)}, false},
		"nil slice":          {map[string]any{"l": []any(nil)}, false},
		"invalid UTF-8":      {map[string]any{"s": "a\xffb"}, false},
		"invalid UTF-8 key":  {map[string]any{"a\xff": "b"}, false},
		"C1 control":         {map[string]any{"s": "a\u0085b"}, false},
		"DEL":                {map[string]any{"s": "a\x7fb"}, false},
		"BOM":                {map[string]any{"s": "\ufeffa"}, false},
		"other type":         {map[string]any{"s": []string{"a"}}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := plainJSON(tc.obj); got != tc.plain {
				t.Fatalf("plainJSON = %v, want %v", got, tc.plain)
			}
			if !tc.plain {
				return
			}
			js, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			want, err := yaml.JSONToYAML(js)
			if err != nil {
				t.Fatal(err)
			}
			got, err := plainYAML(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("plainYAML:\n%s\nJSONToYAML:\n%s", got, want)
			}
		})
	}
}

// TestPlainYAMLLongStrings: go-yaml folds long plain strings the same way whichever path
// reaches it.
func TestPlainYAMLLongStrings(t *testing.T) {
	obj := map[string]any{"long": strings.Repeat("word ", 40), "longer": strings.Repeat("x", 300) + " " + strings.Repeat("y", 300)}
	js, _ := json.Marshal(obj)
	want, err := yaml.JSONToYAML(js)
	if err != nil {
		t.Fatal(err)
	}
	got, err := plainYAML(obj)
	if err != nil || string(got) != string(want) {
		t.Errorf("plainYAML (%v):\n%s\nJSONToYAML:\n%s", err, got, want)
	}
}
