package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestScalarShortcuts: the integers, booleans and nulls that scalar reads without yaml.v3
// decode as yaml.v3 decodes them, and the spellings it leaves to yaml.v3 still do.
func TestScalarShortcuts(t *testing.T) {
	for _, n := range []*yaml.Node{
		{Tag: "!!int", Value: "0"}, {Tag: "!!int", Value: "-0"}, {Tag: "!!int", Value: "42"}, {Tag: "!!int", Value: "-42"},
		{Tag: "!!int", Value: "010"}, {Tag: "!!int", Value: "0x1f"}, {Tag: "!!int", Value: "1_000"}, {Tag: "!!int", Value: "+1"},
		{Tag: "!!int", Value: "9223372036854775807"}, {Tag: "!!int", Value: "-9223372036854775808"},
		{Tag: "!!int", Value: "9223372036854775808"}, {Tag: "!!int", Value: "99999999999999999999"},
		{Tag: "!!bool", Value: "true"}, {Tag: "!!bool", Value: "false"}, {Tag: "!!bool", Value: "True"},
		{Tag: "!!null", Value: "null"}, {Tag: "!!null", Value: "~"}, {Tag: "!!null", Value: ""},
		{Value: "42"}, {Value: "true"}, {Value: "null"}, {Value: "name"},
	} {
		n.Kind = yaml.ScalarNode
		got, gotErr := ScalarValue(n)
		var decoded any
		wantErr := n.Decode(&decoded)
		var want any
		if wantErr == nil {
			want, wantErr = unstructuredScalar(n, decoded)
		}
		if (gotErr != nil) != (wantErr != nil) || !cmp.Equal(got, want) {
			t.Errorf("%s %q: %#v (%v), yaml.v3 %#v (%v)", n.Tag, n.Value, got, gotErr, want, wantErr)
		}
	}
}
