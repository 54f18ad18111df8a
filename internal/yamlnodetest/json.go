package yamlnodetest

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
)

// ObjectJSON, the tests' oracle of an object's JSON, writes an object as JSON with the meaning kyaml's RNode.MarshalJSON gives it, in
// time linear in the object's size. Like MarshalJSON it encodes the object to YAML first and
// parses that again, so the tree contract.NodeJSON reads has the tags and styles the encoder
// gave it (a flow mapping's empty value becomes "", not null, as it did through kyaml).
func ObjectJSON(obj *yaml.RNode) ([]byte, error) {
	if obj.YNode() == nil {
		return []byte("null"), nil
	}
	s, err := obj.String()
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return nil, err
	}
	return contract.NodeJSON(&doc)
}
