package yamltag

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Of returns n.ShortTag() without the work yaml.v3 does where less decides: a tag in
// the short "!!" form is its own, and a plain scalar without a tag is a string when its
// first character hints at no other type (yaml.v3's resolve table: a sign, a digit or a dot
// may begin a number) or it begins with a letter but is not one of the words yaml.v3 reads
// as a boolean or null. yaml.v3's resolve boxes the value it returns: one allocation for
// each scalar of each walk over an object.
func Of(n *yaml.Node) string {
	if strings.HasPrefix(n.Tag, "!!") {
		return n.Tag
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "" || n.Style != 0 || n.Value == "" {
		return n.ShortTag()
	}
	switch c := n.Value[0]; {
	case strings.IndexByte("+-.0123456789", c) >= 0:
		return n.ShortTag()
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		switch n.Value {
		case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~":
			return n.ShortTag()
		}
	}
	return yaml.NodeTagString
}
