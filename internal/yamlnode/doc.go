// Package yamlnode holds the engine's helpers over kyaml's YAML nodes, in one place: looking
// up and setting fields without kyaml's allocations where the path is plain mappings,
// comparing trees (Equal, Identical), copying them in an arena the next rewrite reuses
// (Arena, CopyTree), and building a tree from a decoded object and back (TreeOf,
// Unstructured).
//
//	obj := yamlnode.TreeOf(map[string]any{"metadata": map[string]any{"name": "a"}})
//	_ = yamlnode.SetMetadataString(obj, "labels", "app", "x")
//	name, _ := yamlnode.LookupNode(obj.YNode(), "metadata", "name")
package yamlnode
