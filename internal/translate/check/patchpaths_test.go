package check

import (
	"slices"
	"testing"

	"github.com/topolayer/topolayer/contract"
)

// TestPatchPaths: the fields a patch changes, as the API server decodes its paths, whatever
// the spelling.
func TestPatchPaths(t *testing.T) {
	for _, tc := range []struct {
		name, patchType, body string
		want                  [][]string
	}{
		{"json patch, escaped slash and tilde", contract.PatchTypeJSON, `[{"op":"add","path":"/metadata/annotations/a~1b~0c","value":"x"}]`, [][]string{{"metadata", "annotations", "a/b~c"}}},
		{"json patch, test changes nothing; move has two", contract.PatchTypeJSON, `[{"op":"test","path":"/a","value":1},{"op":"move","from":"/b","path":"/c"}]`, [][]string{{"c"}, {"b"}}},
		{"merge patch, JSON string escape", contract.PatchTypeMerge, `{"metadata":{"annotations":{"a\/b":"x"}}}`, [][]string{{"metadata", "annotations", "a/b"}}},
		{"merge patch removing a mapping", contract.PatchTypeMerge, `{"metadata":{"annotations":null}}`, [][]string{{"metadata", "annotations"}}},
		{"strategic directive touches its mapping", contract.PatchTypeStrategicMerge, `{"metadata":{"labels":{"$patch":"replace"}}}`, [][]string{{"metadata", "labels"}}},
		{"a YAML patch", contract.PatchTypeMerge, "data: {a: b}\n", [][]string{{"data", "a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := patchPaths([]byte(tc.body), tc.patchType)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]string]) {
				t.Errorf("patchPaths = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := patchPaths([]byte(`{"op":"add"}`), contract.PatchTypeJSON); err == nil {
		t.Error("a JSON patch that is not a list: no error")
	}
}

// FuzzPatchPaths: any body, any patch type, returns paths or an error, never panics.
func FuzzPatchPaths(f *testing.F) {
	f.Add([]byte(`[{"op":"add","path":"/a~1b","value":1}]`), contract.PatchTypeJSON)
	f.Add([]byte(`{"metadata":{"annotations":{"a\/b":"x","$patch":"replace"}}}`), contract.PatchTypeStrategicMerge)
	f.Add([]byte("a: [1, {b: null}]\n"), contract.PatchTypeMerge)
	f.Fuzz(func(t *testing.T, body []byte, patchType string) {
		paths, err := patchPaths(body, patchType)
		if err == nil {
			_ = touches(paths, "metadata", "annotations", "x")
		}
	})
}
