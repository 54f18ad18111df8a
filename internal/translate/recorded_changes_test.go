package translate

import (
	"reflect"
	"testing"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/transform"

	"github.com/topolayer/topolayer/internal/yamlnode"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
)

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
		deploymentTemplate, _ := podspec.PodTemplatePath("deployments")
		f, err := transform.NewPodSpecEdit(deploymentTemplate, spec)
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
