// Package yamltag tells the short tag of a YAML node (!!str, !!int, !!bool, ...) as
// yaml.v3's Node.ShortTag does, without the allocation yaml.v3's resolve makes where the
// node's text decides at a glance. The body decoder (package contract) and the engine's tree
// helpers (package yamlnode) read the tag of every scalar of every object with it.
//
//	n := &yaml.Node{Kind: yaml.ScalarNode, Value: "oauth-openshift"}
//	yamltag.Of(n) // "!!str", as n.ShortTag() says
package yamltag
