package references

import (
	"fmt"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/api/filters/fieldspec"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestFieldSpecTargetsMatchFilter: where fieldSpecTargets says it is sure, it finds the nodes
// kustomize's fieldspec filter hands its SetValue, in the same order, for every referrer of
// the reference table, on objects of many shapes; where the filter fails, it is not sure.
func TestFieldSpecTargetsMatchFilter(t *testing.T) {
	objects := []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      serviceAccountName: sa\n      volumes: [{name: a, configMap: {name: c}}, {name: b, secret: {secretName: s}}, null, {name: x, projected: {sources: [{configMap: {name: p}}, {secret: {name: q}}]}}]\n      containers:\n      - name: a\n        env: [{name: A, valueFrom: {configMapKeyRef: {name: c, key: k}}}, {name: B, valueFrom: {secretKeyRef: {name: s}}}]\n        envFrom: [{configMapRef: {name: c}}, {secretRef: {name: s}}]\n      initContainers: null\n      imagePullSecrets: [{name: p}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      volumes: x\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers: [x, {name: a, env: 1}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template: &t\n    spec:\n      volumes: [{name: a, configMap: {name: c}}]\n  x: *t\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: null\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: [a]\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b}\nroleRef: {kind: Role, name: r}\nsubjects: [{kind: ServiceAccount, name: s, namespace: n}, {kind: User, name: u}]\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules: [{apiGroups: [''], resources: [configmaps], resourceNames: [a, b]}]\n",
		"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {jobTemplate: {spec: {template: {spec: {serviceAccountName: s, volumes: [{name: v, secret: {secretName: x}}]}}}}}\n",
	}
	checked := 0
	for _, src := range objects {
		obj := yaml.MustParse(src)
		for _, rf := range nameReferrers[obj.GetKind()] {
			t.Run(fmt.Sprintf("%s/%s", obj.GetKind(), rf.spec.Path), func(t *testing.T) {
				var want []*yaml.Node
				_, wantErr := fieldspec.Filter{FieldSpec: rf.spec, SetValue: func(n *yaml.RNode) error {
					want = append(want, n.YNode())
					return nil
				}}.Filter(obj.Copy())
				// The filter ran on a copy: compare the nodes' places, by document order.
				got, ok := fieldSpecTargets(obj.YNode(), rf.parts, nil)
				if !ok {
					return
				}
				if wantErr != nil {
					t.Fatalf("sure, but the filter fails: %v", wantErr)
				}
				checked++
				if !slices.EqualFunc(got, want, func(a, b *yaml.Node) bool {
					return a.Kind == b.Kind && a.Value == b.Value && a.Line == b.Line && a.Column == b.Column
				}) {
					t.Errorf("found %d nodes, the filter %d", len(got), len(want))
				}
			})
		}
	}
	if checked == 0 {
		t.Error("no referrer checked")
	}
}
