package translate

import (
	"reflect"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
)

// TestObjectOf: the object objectOf returns for a rewritten tree is the one
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
			mappingValue(mappingValue(root, "metadata"), "name").Value = "web-2"
		}, shares: [][]string{{"spec"}, {"metadata", "labels"}}},
		{name: "a key added last, out of order", edit: func(root *yaml.Node) {
			labels := mappingValue(mappingValue(root, "metadata"), "labels")
			setScalar(labels, "aaa", yaml.NewStringRNode("x").YNode())
		}, shares: [][]string{{"spec"}}},
		{name: "a key removed", edit: func(root *yaml.Node) {
			removeField(mappingValue(root, "spec"), "paused")
		}, shares: [][]string{{"spec", "template"}, {"metadata"}}},
		{name: "an element changed", edit: func(root *yaml.Node) {
			c := mappingValue(mappingValue(mappingValue(mappingValue(root, "spec"), "template"), "spec"), "containers").Content[0]
			mappingValue(c, "args").Content[1].Value = "--c"
		}, shares: [][]string{{"spec", "selector"}, {"spec", "template", "metadata"}}},
		{name: "an element added", edit: func(root *yaml.Node) {
			vols := mappingValue(mappingValue(mappingValue(mappingValue(root, "spec"), "template"), "spec"), "volumes")
			vols.Content = append(vols.Content, yaml.MustParse("{name: v, emptyDir: {}}").YNode())
		}, shares: [][]string{{"spec", "selector"}}},
		{name: "untagged scalars", edit: func(root *yaml.Node) {
			spec := mappingValue(root, "spec")
			*mappingValue(spec, "paused") = yaml.Node{Kind: yaml.ScalarNode, Value: "true"}
			*mappingValue(spec, "replicas") = yaml.Node{Kind: yaml.ScalarNode, Value: "3"}
			setScalar(spec, "minReadySeconds", &yaml.Node{Kind: yaml.ScalarNode, Value: "on"})
		}, shares: [][]string{{"spec", "template"}}},
		{name: "the same value untagged", edit: func(root *yaml.Node) {
			*mappingValue(mappingValue(root, "spec"), "replicas") = yaml.Node{Kind: yaml.ScalarNode, Value: "2"}
		}, shares: [][]string{{}}},
		{name: "a key written twice", edit: func(root *yaml.Node) {
			meta := mappingValue(root, "metadata")
			meta.Content = append(meta.Content, yaml.NewStringRNode("name").YNode(), yaml.NewStringRNode("other").YNode())
		}, wantErr: true},
		{name: "a key that is not a string", edit: func(root *yaml.Node) {
			labels := mappingValue(mappingValue(root, "metadata"), "labels")
			labels.Content = append(labels.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: "1"}, yaml.NewStringRNode("x").YNode())
		}, wantErr: true},
		{name: "an alias", edit: func(root *yaml.Node) {
			spec := mappingValue(root, "spec")
			sel := mappingValue(spec, "selector")
			sel.Anchor = "sel"
			setScalar(mappingValue(root, "metadata"), "selector", &yaml.Node{Kind: yaml.AliasNode, Value: "sel", Alias: sel})
		}},
		{name: "a merge key", edit: func(root *yaml.Node) {
			labels := mappingValue(mappingValue(root, "metadata"), "labels")
			labels.Content = append(labels.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "<<"}, yaml.MustParse("{tier: front}").YNode())
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := source()
			tree := treeOf(src).YNode()
			tc.edit(tree)
			want, wantErr := contract.NodeObject(tree)
			got, err := objectOf(tree, src)
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
				g, s := valueAt(got, path...), valueAt(src, path...)
				if reflect.ValueOf(g).UnsafePointer() != reflect.ValueOf(s).UnsafePointer() {
					t.Errorf("%v: not shared with the source", path)
				}
			}
		})
	}
}
