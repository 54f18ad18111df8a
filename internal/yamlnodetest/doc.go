// Package yamlnodetest is the tests' oracle of YAML trees: the first difference between two,
// for a test to print.
//
//	if d := yamlnodetest.NodeDiff(want.YNode(), got.YNode(), ""); d != "" {
//		t.Error(d)
//	}
package yamlnodetest
