package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestShortTag: ShortTag is yaml.Node.ShortTag, for every tag form and style, and for a plain
// scalar beginning with each byte.
func TestShortTag(t *testing.T) {
	nodes := []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "1"}, {Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"},
		{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, {Kind: yaml.ScalarNode, Value: "1"},
		{Kind: yaml.ScalarNode, Value: "1", Style: yaml.DoubleQuotedStyle}, {Kind: yaml.ScalarNode, Tag: "!", Value: "x"},
		{Kind: yaml.ScalarNode, Tag: "tag:yaml.org,2002:str", Value: "x"}, {Kind: yaml.ScalarNode, Tag: "!custom", Value: "x"},
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "x", Style: yaml.SingleQuotedStyle}, {Kind: yaml.MappingNode},
		{Kind: yaml.SequenceNode, Tag: "!!seq"}, {Kind: yaml.ScalarNode, Tag: "!!binary", Value: "eA=="},
		{Kind: yaml.ScalarNode, Value: ""}, {Kind: yaml.ScalarNode, Value: "<<"}, {Kind: yaml.ScalarNode, Value: "é"},
		{Kind: yaml.ScalarNode, Value: "2026-11-29T00:00:00Z"}, {Kind: yaml.ScalarNode, Value: "x", Style: yaml.TaggedStyle},
		{Kind: yaml.ScalarNode, Value: "1", Style: yaml.FlowStyle},
	}
	for b := range 256 {
		for _, rest := range []string{"", "1", "es", "ull", "rue", "alse", "n", "ff", "inf", "nan", "x0", "_1", "RUE", "ALSE", "ULL", "ull", "o", "O", "ES"} {
			nodes = append(nodes, &yaml.Node{Kind: yaml.ScalarNode, Value: string([]byte{byte(b)}) + rest})
		}
	}
	for _, n := range nodes {
		if got, want := ShortTag(n), n.ShortTag(); got != want {
			t.Errorf("%+v: %q, want %q", n, got, want)
		}
	}
}

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
