package translate

import (
	"reflect"
	"testing"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/transform"

	"github.com/topolayer/topolayer/internal/translate/internal/yamlnode"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/kio"
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

// TestEventReferenceChanges: the changes rewriteEventReferences records are the ones a diff of
// the event before and after lists, in its order, whatever the event's references hold.
func TestEventReferenceChanges(t *testing.T) {
	resolve := func(gk schema.GroupKind, namespace, name string) (contract.Identity, bool) {
		switch {
		case gk.Kind == "Deployment" && name == "web":
			return contract.Identity{Group: "apps", Resource: "deployments", Namespace: "hcp", Name: namespace + "-web"}, true
		case gk.Kind == "Node":
			return contract.Identity{Resource: "nodes", Name: name}, true
		case gk.Kind == "Widget":
			return contract.Identity{Group: "shadow.example.com", Resource: "widgets", Namespace: "hcp", Name: name}, true
		}
		return contract.Identity{}, false
	}
	for _, body := range []string{
		"kind: Event\ninvolvedObject: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: ns}\n",
		"kind: Event\ninvolvedObject: {kind: Deployment, name: web, namespace: ns}\n",
		"kind: Event\ninvolvedObject: {name: web, kind: Deployment, apiVersion: apps/v1}\n",
		"kind: Event\ninvolvedObject: {namespace: ns, name: web, kind: Deployment, apiVersion: apps/v1}\n",
		"kind: Event\ninvolvedObject: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: null}\n",
		"kind: Event\ninvolvedObject: {apiVersion: v1, kind: Pod, name: p, namespace: other}\n",
		"kind: Event\ninvolvedObject: {apiVersion: v1, kind: Pod, name: p, namespace: hcp}\n",
		"kind: Event\ninvolvedObject: {apiVersion: v1, kind: Node, name: n}\n",
		"kind: Event\ninvolvedObject: {apiVersion: example.com/v1, kind: Widget, name: w, namespace: ns}\n",
		"kind: Event\nrelated: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: ns}\nregarding: {apiVersion: v1, kind: Pod, name: p, namespace: ns}\n",
		"kind: Event\ninvolvedObject: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: 12}\n",
		"kind: Event\ninvolvedObject: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: {a: b}}\n",
		"kind: Event\ninvolvedObject: [a]\n",
	} {
		obj := yaml.MustParse(body)
		before := yamlnode.CopyTree(obj.YNode())
		got, err := rewriteEventReferences(obj, contract.DefaultDiscovery(), resolve, "hcp")
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if want := plans.Diff(before, obj.YNode(), "", ""); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: recorded %v, the diff %v", body, got, want)
		}
	}
}

// TestScopedFilterChanges: a scoped filter's changes, diffed in its scope, are the ones a diff
// of the whole object lists, in its order, for the profile's scoped transforms on objects of
// many shapes.
func TestScopedFilterChanges(t *testing.T) {
	// The scoped filters the hypershift profile (hosted.HyperShiftProfile) runs on a
	// Deployment: drop-owner-references and its pod spec edits.
	filters := []kio.Filter{transform.DropOwnerReferences{}}
	for _, spec := range []map[string]any{
		{"nodeSelector": nil, "tolerations": nil, "affinity": nil, "priorityClassName": nil},
		{"priorityClassName": "hypershift-control-plane", "tolerations": []any{
			map[string]any{"key": "hypershift.openshift.io/control-plane", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
			map[string]any{"key": "hypershift.openshift.io/cluster", "operator": "Equal", "value": "hcp", "effect": "NoSchedule"},
		}},
		{"imagePullSecrets": []any{map[string]any{"name": "pull-secret"}}},
	} {
		f, err := transform.NewPodSpecEdit(podTemplatePaths["deployments"], spec)
		if err != nil {
			t.Fatal(err)
		}
		filters = append(filters, f)
	}
	if len(filters) < 4 {
		t.Fatalf("%d scoped transforms in the profile, want drop-owner-references and the pod spec edits", len(filters))
	}
	for _, body := range []string{
		"kind: ConfigMap\nmetadata: {name: a, ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: b, uid: u}]}\n",
		"kind: ConfigMap\nmetadata: {name: a}\n",
		"kind: ConfigMap\nmetadata: {name: a, ownerReferences: null}\n",
		"kind: ConfigMap\nmetadata: {name: a, ownerReferences: {weird: map}}\n",
		"kind: ConfigMap\nmetadata: null\n",
		"kind: ConfigMap\n",
		"kind: ConfigMap\nmetadata: [a]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      priorityClassName: x\n      nodeSelector: {a: b}\n      containers: [{name: c, image: i}]\n      tolerations: [{key: k, operator: Exists}]\n      imagePullSecrets: [{name: other}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: i}]\n      affinity: {nodeAffinity: {}}\n      imagePullSecrets: [{name: pull-secret}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec: {}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec: null\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template: {}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      tolerations: null\n      imagePullSecrets: []\n      zzz: 1\n      priorityClassName: \"\"\n",
	} {
		for _, f := range filters {
			obj := yaml.MustParse(body)
			whole := yamlnode.CopyTree(obj.YNode())
			scope, scoped := scopeOf(f, obj.YNode())
			if !scoped {
				continue // the engine runs the filter and diffs the whole object
			}
			scope.edit()
			filtered := yaml.MustParse(body)
			if _, err := f.Filter([]*yaml.RNode{filtered}); err != nil {
				t.Fatalf("%q: %v", body, err)
			}
			if !yamlnode.Identical(obj.YNode(), filtered.YNode()) {
				t.Errorf("%q, %T: the edit made %s, the filter %s", body, f, obj.MustString(), filtered.MustString())
			}
			want := plans.Diff(whole, obj.YNode(), "by", plans.ChangeTransformed)
			if got := scope.changes(obj.YNode(), "by"); !reflect.DeepEqual(got, want) {
				t.Errorf("%q, %T: in scope %v, the whole object's %v", body, f, got, want)
			}
		}
	}
}
