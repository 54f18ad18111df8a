package yamltag

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestOf: Of is yaml.Node.ShortTag, for every tag form and style, and for a plain
// scalar beginning with each byte.
func TestOf(t *testing.T) {
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
		if got, want := Of(n), n.ShortTag(); got != want {
			t.Errorf("%+v: %q, want %q", n, got, want)
		}
	}
}
