package prune_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/prune"
)

// mustGather is a small must-gather shared by the cases below.
var mustGather = map[string]string{
	"namespaces/a/core/configmaps.yaml": `apiVersion: v1
kind: ConfigMapList
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: zeta, namespace: a, labels: {app: x}, managedFields: [{manager: m}]}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: alpha, namespace: a, labels: {app: x}}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: other, namespace: a, labels: {app: y}}}
`,
	"namespaces/b/core/configmaps/beta.yaml": `{apiVersion: v1, kind: ConfigMap, metadata: {name: beta, namespace: b, labels: {app: x}}}`,
	"namespaces/b/core/secrets/s1.yaml":      `{apiVersion: v1, kind: Secret, metadata: {name: s1, namespace: b, labels: {app: x}}}`,
	"namespaces/c/core/secrets/s2.yaml":      `{apiVersion: v1, kind: Secret, metadata: {name: s2, namespace: c, labels: {app: x}}}`,
	"cluster-scoped-resources/config.openshift.io/ingresses.yaml": `apiVersion: config.openshift.io/v1
kind: IngressList
items:
- apiVersion: config.openshift.io/v1
  kind: Ingress
  metadata: {name: cluster}
  spec:
    componentRoutes:
    - {name: r, namespace: a, secret: {name: zeta}}
    - {name: r, namespace: elsewhere, secret: {name: alpha}}
    - {name: q, namespace: a, secret: {name: missing}}
`,
	"namespaces/a/example.io/widgets.yaml": `apiVersion: example.io/v1
kind: WidgetList
items:
- {apiVersion: example.io/v1, kind: Widget, metadata: {name: w, namespace: a}}
`,
	"namespaces/b/example.io/widgets.yaml": `apiVersion: example.io/v2
kind: WidgetList
items:
- {apiVersion: example.io/v2, kind: Widget, metadata: {name: w, namespace: b}}
`,
}

func TestPrune(t *testing.T) {
	in, err := contract.ReadInputDir(contracttest.TempTree(t, mustGather), contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		resources string
		want      map[string][]string // path -> item names, in order
		wantErr   []string
	}{
		"label-selected keep the directory's order, not sorted": {
			resources: `labelSelectedResources: [{group: "", version: v1, resource: configmaps, namespace: a, labelSelector: {matchLabels: {app: x}}}]`,
			want:      map[string][]string{"namespaces/a/core/configmaps.yaml": {"zeta", "alpha"}},
		},
		"across namespaces, list files win over per-object files": {
			resources: `labelSelectedResources: [{group: "", version: v1, resource: configmaps, labelSelector: {matchLabels: {app: x}}}]`,
			want:      map[string][]string{"namespaces/a/core/configmaps.yaml": {"zeta", "alpha"}},
		},
		"across namespaces, per-object files when there is no list file": {
			resources: `labelSelectedResources: [{group: "", version: v1, resource: secrets, labelSelector: {matchLabels: {app: x}}}]`,
			want:      map[string][]string{"namespaces/b/core/secrets.yaml": {"s1"}, "namespaces/c/core/secrets.yaml": {"s2"}},
		},
		"each object once, where it was first found; missing ones skipped": {
			resources: `exactResources:
- {group: "", version: v1, resource: configmaps, namespace: a, name: alpha}
- {group: "", version: v1, resource: configmaps, namespace: a, name: nope}
- {group: nope.io, version: v1, resource: configmaps, namespace: a, name: alpha}
labelSelectedResources: [{group: "", version: v1, resource: configmaps, namespace: a, labelSelector: {matchLabels: {app: x}}}]`,
			want: map[string][]string{"namespaces/a/core/configmaps.yaml": {"alpha", "zeta"}},
		},
		"anded filter references; the referring object is kept": {
			resources: `resourceReferences:
- type: ImplicitNamespacedReference
  referringResource: {group: config.openshift.io, version: v1, resource: ingresses, name: cluster}
  implicitNamespacedReference: {group: "", version: v1, resource: configmaps, namespace: a, nameJSONPath: '$.spec.componentRoutes[?(@.name == "r" && @.namespace == "a")].secret.name'}`,
			want: map[string][]string{"cluster-scoped-resources/config.openshift.io/ingresses.yaml": {"cluster"}, "namespaces/a/core/configmaps.yaml": {"zeta"}},
		},
		"wildcard references, missing targets skipped": {
			resources: `resourceReferences:
- type: ImplicitNamespacedReference
  referringResource: {group: config.openshift.io, version: v1, resource: ingresses, name: cluster}
  implicitNamespacedReference: {group: "", version: v1, resource: configmaps, namespace: a, nameJSONPath: '$.spec.componentRoutes[*].secret.name'}`,
			want: map[string][]string{"cluster-scoped-resources/config.openshift.io/ingresses.yaml": {"cluster"}, "namespaces/a/core/configmaps.yaml": {"zeta", "alpha"}},
		},
		"a missing referring object skips the reference": {
			resources: `resourceReferences:
- type: ImplicitNamespacedReference
  referringResource: {group: config.openshift.io, version: v1, resource: ingresses, name: absent}
  implicitNamespacedReference: {group: "", version: v1, resource: configmaps, namespace: a, nameJSONPath: '$.spec.componentRoutes[*].secret.name'}`,
			want: map[string][]string{},
		},
		"other reference types keep the referring object only": {
			resources: `resourceReferences:
- type: ClusterScopedReference
  referringResource: {group: config.openshift.io, version: v1, resource: ingresses, name: cluster}
  clusterScopedReference: {group: "", version: v1, resource: namespaces, nameJSONPath: '$.spec.componentRoutes[*].namespace'}`,
			want: map[string][]string{"cluster-scoped-resources/config.openshift.io/ingresses.yaml": {"cluster"}},
		},
		"one kind in two versions": {
			resources: `exactResources:
- {group: example.io, version: v1, resource: widgets, namespace: a, name: w}
- {group: example.io, version: v2, resource: widgets, namespace: b, name: w}`,
			wantErr: []string{"Widget.example.io found in versions v1, v2"},
		},
		"apiVersion other than the one asked for": {
			resources: `exactResources: [{group: example.io, version: v2, resource: widgets, namespace: a, name: w}]`,
			wantErr:   []string{"applyConfigurationResources.exactResources[0]: widgets.v2.example.io/w in namespace a:", `apiVersion "example.io/v1", but example.io/v2 was requested`},
		},
		"label-selected resource unknown to discovery": {
			resources: `labelSelectedResources: [{group: example.io, version: v1, resource: widgets, labelSelector: {}}]`,
			wantErr:   []string{"applyConfigurationResources.labelSelectedResources[0]: example.io/v1, Resource=widgets is not in the must-gather's discovery"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			declared, err := contract.ParseInputResources([]byte("applyConfigurationResources:\n" + indent(tt.resources)))
			if err != nil {
				t.Fatal(err)
			}
			lists, err := prune.Prune(in, declared.ApplyConfigurationResources)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, l := range lists {
				for _, it := range l.Items {
					got[l.Path] = append(got[l.Path], it.GetName())
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lists (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPruneKeepsServerFields: managedFields and the rest travel unchanged.
func TestPruneKeepsServerFields(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "namespaces/a/core/configmaps.yaml")
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, []byte(mustGather["namespaces/a/core/configmaps.yaml"]), 0o644)
	in, err := contract.ReadInputDir(dir, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	declared, _ := contract.ParseInputResources([]byte(`applyConfigurationResources: {exactResources: [{group: "", version: v1, resource: configmaps, namespace: a, name: zeta}]}`))
	lists, err := prune.Prune(in, declared.ApplyConfigurationResources)
	if err != nil {
		t.Fatal(err)
	}
	data, err := lists[0].Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    labels:
      app: x
    managedFields:
    - manager: m
    name: zeta
    namespace: a
kind: ConfigMapList
`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestWriteRefusesContent: the target must be absent or empty.
func TestWriteRefusesContent(t *testing.T) {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if err := prune.Write(dir, nil); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("err = %v", err)
	}
	if err := prune.Write(t.TempDir(), []prune.List{{Path: "../escape.yaml"}}); err == nil {
		t.Fatal("a path outside the directory was accepted")
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}
