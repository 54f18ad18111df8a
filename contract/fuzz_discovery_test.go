package contract_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
)

// FuzzParseDiscovery: any document parses into a Discovery or fails with an error, without
// panicking, and a Discovery that parsed answers lookups.
func FuzzParseDiscovery(f *testing.F) {
	f.Add([]byte(`{"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": [{"metadata": {"name": "apps"}, "versions": [{"version": "v1", "resources": [{"resource": "deployments", "responseKind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "scope": "Namespaced", "verbs": ["get"]}]}]}]}`))
	f.Add([]byte("items:\n- metadata: {name: \"\"}\n  versions:\n  - version: v1\n    resources:\n    - {resource: nodes, scope: Cluster, responseKind: {kind: Node}}\n    - {resource: nodes/status, scope: Cluster}\n"))
	f.Add([]byte("items: [{versions: [{resources: [{resource: \"\"}]}]}]"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		d, err := contract.ParseDiscovery(doc)
		if err != nil {
			return
		}
		for _, gvr := range []schema.GroupVersionResource{{Group: "apps", Version: "v1", Resource: "deployments"}, {Version: "v1", Resource: "nodes"}, {}} {
			kind, ok := d.KindFor(gvr)
			if !ok || kind == "" {
				continue
			}
			if r, ok := d.ResourceFor(gvr.GroupVersion().WithKind(kind)); !ok || r == "" {
				t.Errorf("%s is of kind %s, which names no resource", gvr, kind)
			}
			_, _ = d.Namespaced(gvr.GroupResource())
			_, _ = d.PreferredVersion(gvr.GroupResource())
		}
	})
}

// FuzzEvaluateNames: any JSONPath parses or fails, and one that parses evaluates on an
// object to names or an error, without panicking or hanging.
func FuzzEvaluateNames(f *testing.F) {
	for _, p := range []string{"$.spec.names[*].name", "$.metadata.name", `$.spec.items[?(@.kind == "Secret")].name`, "$..name", "$.a[0:2]", "$[", "$.x && $.y", `$.a =~ "(a+)+$"`} {
		f.Add(p)
	}
	obj := map[string]any{
		"metadata": map[string]any{"name": "n", "namespace": "ns"},
		"spec": map[string]any{
			"names": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, "c"},
			"items": []any{map[string]any{"kind": "Secret", "name": "s"}, map[string]any{"kind": "ConfigMap", "name": "c"}},
		},
		"a": []any{"x", "y", "z"},
	}
	f.Fuzz(func(t *testing.T, p string) {
		_, _ = contract.EvaluateNames(p, obj)
	})
}
