package manager

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/gather"
)

// cacheReader is a gather.Reader over a controller-runtime cache: the runs' inputs are read
// from the shared informers, never from the API server.
type cacheReader struct {
	name   string
	reader client.Reader
	mapper meta.RESTMapper
}

var _ gather.Reader = cacheReader{}

// kind returns the kind of gvr; ok is false when the cluster does not serve it.
func (r cacheReader) kind(gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool, error) {
	gvk, err := r.mapper.KindFor(gvr)
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionKind{}, false, nil
	}
	if err != nil {
		return schema.GroupVersionKind{}, false, fmt.Errorf("cluster %s: resource %s: %w", r.name, gvr, err)
	}
	return gvk, true, nil
}

// Get implements gather.Reader.
func (r cacheReader) Get(ctx context.Context, id contract.Identity) (*unstructured.Unstructured, error) {
	gvk, ok, err := r.kind(id.GroupVersionResource())
	if err != nil || !ok {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err = r.reader.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: get %s: %w", r.name, id, err)
	}
	return u, nil
}

// List implements gather.Reader.
func (r cacheReader) List(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) ([]*unstructured.Unstructured, error) {
	gvk, ok, err := r.kind(gvr)
	if err != nil || !ok {
		return nil, err
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list %s: selector %q: %w", r.name, gvr, selector, err)
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := r.reader.List(ctx, l, opts...); err != nil {
		return nil, fmt.Errorf("cluster %s: list %s in %q: %w", r.name, gvr, ns, err)
	}
	out := make([]*unstructured.Unstructured, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
		out[i].SetGroupVersionKind(gvk)
	}
	return out, nil
}

// Namespaced implements gather.Reader.
func (r cacheReader) Namespaced(gvr schema.GroupVersionResource) (bool, error) {
	gvk, ok, err := r.kind(gvr)
	if err != nil || !ok {
		return false, err
	}
	m, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, fmt.Errorf("cluster %s: resource %s: %w", r.name, gvr, err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}
