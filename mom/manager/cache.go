package manager

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scheme is the scheme of topolayer's clusters: client-go's built-in types; everything else
// is read and written as unstructured objects.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	return s
}

// CacheOptions returns the cache options of cluster for watches: its informers limited to
// the namespaces the watches read, plus extra; unlimited when a watch reads every namespace
// or none names a namespace (cluster-scoped resources are read whole either way).
func CacheOptions(watches []Watch, cluster string, extra ...string) cache.Options {
	if slices.ContainsFunc(watches, func(w Watch) bool { return w.Cluster == cluster && w.Namespaces == nil }) {
		return cache.Options{}
	}
	out := map[string]cache.Config{}
	for _, ns := range append(CacheNamespaces(watches, cluster), extra...) {
		out[ns] = cache.Config{}
	}
	if len(out) == 0 {
		return cache.Options{}
	}
	return cache.Options{DefaultNamespaces: out}
}

// NewCacheFunc returns the cache constructor of cluster for watches: controller-runtime's
// cache.New, with the informers of each watched namespaced resource limited to the
// namespaces its own watches read (ByObject). CacheOptions gives the union of the namespaces
// of all resources; without this, every resource would be watched in every namespace of
// that union.
func NewCacheFunc(watches []Watch, cluster string) cache.NewCacheFunc {
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		if opts.Mapper != nil {
			byObject := maps.Clone(opts.ByObject)
			if byObject == nil {
				byObject = map[client.Object]cache.ByObject{}
			}
			maps.Copy(byObject, ByObject(watches, cluster, opts.Mapper))
			opts.ByObject = byObject
		}
		return cache.New(cfg, opts)
	}
}

// ByObject returns the cache settings that limit the informer of each namespaced resource
// that watches read on cluster to the namespaces they read it in: one watch per resource
// and namespace. Resources read in every namespace, cluster-scoped resources, and resources
// that mapper does not know (not served yet) are left to the cache's defaults.
func ByObject(watches []Watch, cluster string, mapper meta.RESTMapper) map[client.Object]cache.ByObject {
	out := map[client.Object]cache.ByObject{}
	for _, w := range watches {
		if w.Cluster != cluster || w.Namespaces == nil {
			continue
		}
		gvk, err := mapper.KindFor(w.Resource)
		if err != nil {
			continue
		}
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil || mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			continue
		}
		namespaces := map[string]cache.Config{}
		for _, ns := range w.Namespaces {
			if ns != "" {
				namespaces[ns] = cache.Config{}
			}
		}
		if len(namespaces) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		out[u] = cache.ByObject{Namespaces: namespaces}
	}
	return out
}
