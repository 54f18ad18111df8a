package manager

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestByObject: each namespaced resource is cached in the namespaces its watches read, not
// in the union of every resource's namespaces.
func TestByObject(t *testing.T) {
	v1 := schema.GroupVersion{Version: "v1"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{v1})
	mapper.Add(v1.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	mapper.Add(v1.WithKind("Secret"), meta.RESTScopeNamespace)
	mapper.Add(v1.WithKind("Namespace"), meta.RESTScopeRoot)
	watch := func(cluster, resource string, namespaces ...string) Watch {
		return Watch{Cluster: cluster, Resource: v1.WithResource(resource), Namespaces: namespaces}
	}
	for _, tc := range []struct {
		name    string
		watches []Watch
		want    []string // kind=namespaces
	}{
		{"each kind in its own namespaces", []Watch{watch("c", "configmaps", "a", "b"), watch("c", "secrets", "b")}, []string{"ConfigMap=a,b", "Secret=b"}},
		{"another cluster's watches", []Watch{watch("other", "configmaps", "a")}, nil},
		{"every namespace: the cache's default", []Watch{{Cluster: "c", Resource: v1.WithResource("configmaps")}}, nil},
		{"cluster-scoped: read whole", []Watch{watch("c", "namespaces", "")}, nil},
		{"not served: the cache's default", []Watch{watch("c", "widgets", "a")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for obj, by := range ByObject(tc.watches, "c", mapper) {
				var nss []string
				for ns := range by.Namespaces {
					nss = append(nss, ns)
				}
				sort.Strings(nss)
				got = append(got, obj.GetObjectKind().GroupVersionKind().Kind+"="+strings.Join(nss, ","))
			}
			sort.Strings(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("ByObject = %v, want %v", got, tc.want)
			}
		})
	}
}
