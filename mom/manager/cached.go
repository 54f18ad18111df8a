package manager

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/topolayer/topolayer/internal/apply"
)

// informed is the apply.Cache of one cluster: what its informers hold of the resources and
// namespaces the manager watches there, so that a plan entry those objects show unchanged
// costs no request. Only watched resources are read (watch registers them as it opens
// their informers): a cache read of any other would open a new watch, so it answers "not
// cached" and the write asks the server.
type informed struct {
	reader client.Reader

	mu        sync.RWMutex
	resources map[schema.GroupVersionResource]informedResource
}

// informedResource is one watched resource: its kind, and the namespaces read (nil: all).
type informedResource struct {
	gvk        schema.GroupVersionKind
	namespaces []string
}

var _ apply.Cache = (*informed)(nil)

func newInformed(reader client.Reader) *informed {
	return &informed{reader: reader, resources: map[schema.GroupVersionResource]informedResource{}}
}

// add records that the informer of w's resource, of kind gvk, is open.
func (c *informed) add(w Watch, gvk schema.GroupVersionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resources[w.Resource] = informedResource{gvk: gvk, namespaces: w.Namespaces}
}

// Cached returns a copy of the cached object, when its resource and namespace are watched
// and the informer holds it.
func (c *informed) Cached(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	c.mu.RLock()
	r, ok := c.resources[gvr]
	c.mu.RUnlock()
	if !ok || (r.namespaces != nil && !slices.Contains(r.namespaces, namespace)) {
		return nil, false
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk)
	if err := c.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		return nil, false // absent, or the informer is not synced yet: the server decides
	}
	return u, true
}
