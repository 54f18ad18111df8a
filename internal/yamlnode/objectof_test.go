package yamlnode_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/yamlnode"
)

// TestObjectOf: the object ObjectOf returns for a rewritten tree is the one
// contract.NodeObject decodes from it, whatever the rewrite did (values changed, keys added
// out of order, removed or written twice, scalars untagged, aliases), and it shares with the
// operator's object every subtree the rewrite left as it was.
func TestObjectOf(t *testing.T) {
	source := func() map[string]any {
		obj, err := contract.ParseObject([]byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ns
  labels: {app: web}
spec:
  replicas: 2
  paused: false
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: c
        image: img
        args: ["--a", "--b"]
        ports: [{containerPort: 8443}]
      volumes: []
`))
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	// shares names the paths whose values the result must share with the source.
	tests := []struct {
		name    string
		edit    func(root *yaml.Node)
		shares  [][]string
		wantErr bool
	}{
		{name: "unchanged", edit: func(*yaml.Node) {}, shares: [][]string{{}}},
		{name: "a value changed", edit: func(root *yaml.Node) {
			yamlnode.MappingValue(yamlnode.MappingValue(root, "metadata"), "name").Value = "web-2"
		}, shares: [][]string{{"spec"}, {"metadata", "labels"}}},
		{name: "a key added last, out of order", edit: func(root *yaml.Node) {
			labels := yamlnode.MappingValue(yamlnode.MappingValue(root, "metadata"), "labels")
			yamlnode.SetScalar(labels, "aaa", yaml.NewStringRNode("x").YNode())
		}, shares: [][]string{{"spec"}}},
		{name: "a key removed", edit: func(root *yaml.Node) {
			yamlnode.RemoveField(yamlnode.MappingValue(root, "spec"), "paused")
		}, shares: [][]string{{"spec", "template"}, {"metadata"}}},
		{name: "an element changed", edit: func(root *yaml.Node) {
			c := yamlnode.MappingValue(yamlnode.MappingValue(yamlnode.MappingValue(yamlnode.MappingValue(root, "spec"), "template"), "spec"), "containers").Content[0]
			yamlnode.MappingValue(c, "args").Content[1].Value = "--c"
		}, shares: [][]string{{"spec", "selector"}, {"spec", "template", "metadata"}}},
		{name: "an element added", edit: func(root *yaml.Node) {
			vols := yamlnode.MappingValue(yamlnode.MappingValue(yamlnode.MappingValue(yamlnode.MappingValue(root, "spec"), "template"), "spec"), "volumes")
			vols.Content = append(vols.Content, yaml.MustParse("{name: v, emptyDir: {}}").YNode())
		}, shares: [][]string{{"spec", "selector"}}},
		{name: "untagged scalars", edit: func(root *yaml.Node) {
			spec := yamlnode.MappingValue(root, "spec")
			*yamlnode.MappingValue(spec, "paused") = yaml.Node{Kind: yaml.ScalarNode, Value: "true"}
			*yamlnode.MappingValue(spec, "replicas") = yaml.Node{Kind: yaml.ScalarNode, Value: "3"}
			yamlnode.SetScalar(spec, "minReadySeconds", &yaml.Node{Kind: yaml.ScalarNode, Value: "on"})
		}, shares: [][]string{{"spec", "template"}}},
		{name: "the same value untagged", edit: func(root *yaml.Node) {
			*yamlnode.MappingValue(yamlnode.MappingValue(root, "spec"), "replicas") = yaml.Node{Kind: yaml.ScalarNode, Value: "2"}
		}, shares: [][]string{{}}},
		{name: "a key written twice", edit: func(root *yaml.Node) {
			meta := yamlnode.MappingValue(root, "metadata")
			meta.Content = append(meta.Content, yaml.NewStringRNode("name").YNode(), yaml.NewStringRNode("other").YNode())
		}, wantErr: true},
		{name: "a key that is not a string", edit: func(root *yaml.Node) {
			labels := yamlnode.MappingValue(yamlnode.MappingValue(root, "metadata"), "labels")
			labels.Content = append(labels.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: "1"}, yaml.NewStringRNode("x").YNode())
		}, wantErr: true},
		{name: "an alias", edit: func(root *yaml.Node) {
			spec := yamlnode.MappingValue(root, "spec")
			sel := yamlnode.MappingValue(spec, "selector")
			sel.Anchor = "sel"
			yamlnode.SetScalar(yamlnode.MappingValue(root, "metadata"), "selector", &yaml.Node{Kind: yaml.AliasNode, Value: "sel", Alias: sel})
		}},
		{name: "a merge key", edit: func(root *yaml.Node) {
			labels := yamlnode.MappingValue(yamlnode.MappingValue(root, "metadata"), "labels")
			labels.Content = append(labels.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "<<"}, yaml.MustParse("{tier: front}").YNode())
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := source()
			tree := yamlnode.TreeOf(src).YNode()
			tc.edit(tree)
			want, wantErr := contract.NodeObject(tree)
			got, err := yamlnode.ObjectOf(tree, src)
			if (err != nil) != tc.wantErr || (wantErr != nil) != tc.wantErr {
				t.Fatalf("objectOf: %v, NodeObject: %v; want an error: %v", err, wantErr, tc.wantErr)
			}
			if err != nil {
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("objectOf:\n%v\nNodeObject:\n%v", got, want)
			}
			if !reflect.DeepEqual(src, source()) {
				t.Errorf("the source changed: %v", src)
			}
			for _, path := range tc.shares {
				g, _, _ := unstructured.NestedFieldNoCopy(got, path...)
				s, _, _ := unstructured.NestedFieldNoCopy(src, path...)
				if reflect.ValueOf(g).UnsafePointer() != reflect.ValueOf(s).UnsafePointer() {
					t.Errorf("%v: not shared with the source", path)
				}
			}
		})
	}
}
