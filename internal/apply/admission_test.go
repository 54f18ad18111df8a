package apply

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
)

// TestPreconditioned: a judged patch is written to the object it was judged on only,
// whatever its type; a patch naming its own resourceVersion keeps it.
func TestPreconditioned(t *testing.T) {
	for _, tc := range []struct {
		name, patchType, patch, want string
	}{
		{"a JSON patch tests the resourceVersion first", contract.PatchTypeJSON,
			`[{"op":"add","path":"/metadata/labels/a~1b","value":"c"}]`,
			`[{"op":"test","path":"/metadata/resourceVersion","value":"42"},{"op":"add","path":"/metadata/labels/a~1b","value":"c"}]`},
		{"a merge patch sets it", contract.PatchTypeMerge, `{"data":{"a\/b":"c"}}`, `{"data":{"a/b":"c"},"metadata":{"resourceVersion":"42"}}`},
		{"a strategic merge keeps its metadata", contract.PatchTypeStrategicMerge, `{"metadata":{"labels":{"$patch":"replace","x":"y"}}}`,
			`{"metadata":{"labels":{"$patch":"replace","x":"y"},"resourceVersion":"42"}}`},
		{"a patch naming its own resourceVersion keeps it", contract.PatchTypeMerge, `{"metadata":{"resourceVersion":"7"}}`, `{"metadata":{"resourceVersion":"7"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := preconditioned(tc.patchType, []byte(tc.patch), "42")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}
