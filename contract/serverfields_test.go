package contract_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
)

func TestStripServerFields(t *testing.T) {
	cases := map[string]struct {
		in, want map[string]any
	}{
		"every server-set field": {
			in: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{
				"name": "a", "uid": "u", "resourceVersion": "1", "generation": int64(2),
				"creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": []any{}, "selfLink": "/x",
				"deletionTimestamp": "2026-01-02T00:00:00Z", "labels": map[string]any{"uid": "kept"},
			}},
			want: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{
				"name": "a", "deletionTimestamp": "2026-01-02T00:00:00Z", "labels": map[string]any{"uid": "kept"},
			}},
		},
		"no metadata":        {in: map[string]any{"kind": "List"}, want: map[string]any{"kind": "List"}},
		"metadata not a map": {in: map[string]any{"metadata": "x"}, want: map[string]any{"metadata": "x"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			contract.StripServerFields(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

func TestIdentityKey(t *testing.T) {
	base := contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "ns", Name: "a"}
	cases := map[string]struct {
		a, b contract.Identity
		same bool
	}{
		"another version":             {base, contract.Identity{Group: "apps", Version: "v1beta1", Resource: "deployments", Namespace: "ns", Name: "a"}, true},
		"a name and its generateName": {base, contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "ns", Name: "a", GenerateName: "a-"}, true},
		"another name":                {base, contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "ns", Name: "b"}, false},
		"another namespace":           {base, contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "other", Name: "a"}, false},
		"two generateName prefixes":   {contract.Identity{Resource: "events", GenerateName: "a-"}, contract.Identity{Resource: "events", GenerateName: "b-"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.a.Key() == tc.b.Key(); got != tc.same {
				t.Errorf("%s and %s: same key %v, want %v", tc.a, tc.b, got, tc.same)
			}
		})
	}
}
