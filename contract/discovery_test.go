package contract

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestPreferredVersion(t *testing.T) {
	twoVersions := []byte(`apiVersion: apidiscovery.k8s.io/v2
kind: APIGroupDiscoveryList
items:
- metadata: {name: example.com}
  versions:
  - version: v2
    resources:
    - {resource: widgets, scope: Namespaced, responseKind: {group: example.com, version: v2, kind: Widget}}
  - version: v1
    resources:
    - {resource: widgets, scope: Namespaced, responseKind: {group: example.com, version: v1, kind: Widget}}
    - {resource: gadgets, scope: Cluster, responseKind: {group: example.com, version: v1, kind: Gadget}}
`)
	d, err := ParseDiscovery(twoVersions)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		d      *Discovery
		gr     schema.GroupResource
		want   string
		wantOK bool
	}{
		"core secrets":             {d: DefaultDiscovery(), gr: schema.GroupResource{Resource: "secrets"}, want: "v1", wantOK: true},
		"core configmaps":          {d: DefaultDiscovery(), gr: schema.GroupResource{Resource: "configmaps"}, want: "v1", wantOK: true},
		"apps deployments":         {d: DefaultDiscovery(), gr: schema.GroupResource{Group: "apps", Resource: "deployments"}, want: "v1", wantOK: true},
		"the first version listed": {d: d, gr: schema.GroupResource{Group: "example.com", Resource: "widgets"}, want: "v2", wantOK: true},
		"served in one version":    {d: d, gr: schema.GroupResource{Group: "example.com", Resource: "gadgets"}, want: "v1", wantOK: true},
		"unknown":                  {d: d, gr: schema.GroupResource{Resource: "secrets"}},
		"no discovery":             {gr: schema.GroupResource{Resource: "secrets"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := tc.d.PreferredVersion(tc.gr)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("PreferredVersion(%s) = %q, %v; want %q, %v", tc.gr, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestParseDiscoveryRefuses: a document that does not decode, or names a version or a
// resource with nothing, is an error naming the document and the place.
func TestParseDiscoveryRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		doc, want string
	}{
		"not a list":    {doc: "items: 3", want: "discovery document 0: "},
		"no version":    {doc: "items: [{metadata: {name: apps}, versions: [{resources: [{resource: deployments}]}]}]", want: `discovery document 0: items[0] (group "apps"): versions[0].version: empty`},
		"no resource":   {doc: "items: [{metadata: {name: apps}, versions: [{version: v1, resources: [{resource: deployments}, {responseKind: {kind: Deployment}}]}]}]", want: `discovery document 0: items[0] (group "apps"): versions[0] (v1): resources[1].resource: empty`},
		"core, no name": {doc: "items: [{versions: [{version: v1, resources: [{resource: \"\"}]}]}]", want: `items[0] (group ""): versions[0] (v1): resources[0].resource: empty`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseDiscovery([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
