package manager

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
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
