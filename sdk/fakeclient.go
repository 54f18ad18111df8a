package sdk

import (
	"fmt"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/topolayer/topolayer/contract"
)

// scheme returns the operator's scheme, or one with client-go's types.
func (o *Operator) scheme() *runtime.Scheme {
	if o.Scheme != nil {
		return o.Scheme
	}
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s) // registering client-go's own types does not fail
	return s
}

// crdResource is what a CRD says of one served version.
type crdResource struct {
	resource   string
	namespaced bool
	status     bool
}

// fakeEnv is everything needed to build a controller's fake client: the scheme, a REST
// mapper, the kinds with a status subresource, how kinds map to resources, and the objects
// of the input directory.
type fakeEnv struct {
	scheme     *runtime.Scheme
	discovery  *contract.Discovery
	crds       map[schema.GroupVersionKind]crdResource
	mapper     meta.RESTMapper
	withStatus []client.Object
	objects    []client.Object
}

func newFakeEnv(scheme *runtime.Scheme, in *contract.InputDir, crds []*apiextensionsv1.CustomResourceDefinition) (*fakeEnv, error) {
	e := &fakeEnv{scheme: scheme, discovery: in.Discovery, crds: map[schema.GroupVersionKind]crdResource{}}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			e.crds[gvk] = crdResource{
				resource:   crd.Spec.Names.Plural,
				namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
				status:     v.Subresources != nil && v.Subresources.Status != nil,
			}
		}
	}
	e.mapper, e.withStatus = e.typeInfo()
	e.objects = inputObjects(in)
	// Build one client now, so a broken input object fails the run once, by name, instead
	// of failing every controller.
	if _, err := e.client(interceptor.Funcs{}); err != nil {
		return nil, err
	}
	return e, nil
}

// typeInfo builds the REST mapper from the scheme's kinds that discovery or the CRDs place,
// and lists the kinds with a status subresource: every scheme kind whose Go type has a Status
// field (as for built-in and OpenShift API types), and every CRD version that declares one.
func (e *fakeEnv) typeInfo() (meta.RESTMapper, []client.Object) {
	mapper := meta.NewDefaultRESTMapper(nil)
	var withStatus []client.Object
	add := func(gvk schema.GroupVersionKind, resource string, namespaced bool) {
		scope := meta.RESTScopeRoot
		if namespaced {
			scope = meta.RESTScopeNamespace
		}
		plural := gvk.GroupVersion().WithResource(resource)
		singular := gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind))
		mapper.AddSpecific(gvk, plural, singular, scope)
	}
	for gvk, t := range e.scheme.AllKnownTypes() {
		if _, isCRD := e.crds[gvk]; isCRD || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		obj, err := e.scheme.New(gvk)
		if err != nil {
			continue
		}
		if _, ok := obj.(client.Object); !ok || meta.IsListType(obj) {
			continue
		}
		resource := e.resourceFor(gvk)
		if namespaced, known := e.discovery.Namespaced(schema.GroupResource{Group: gvk.Group, Resource: resource}); known {
			add(gvk, resource, namespaced)
		}
		if f, ok := t.FieldByName("Status"); ok && f.Type.Kind() == reflect.Struct {
			u := &unstructured.Unstructured{} // typed objects may map to several kinds
			u.SetGroupVersionKind(gvk)
			withStatus = append(withStatus, u)
		}
	}
	for gvk, r := range e.crds {
		add(gvk, r.resource, r.namespaced)
		if r.status {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			withStatus = append(withStatus, u)
		}
	}
	return mapper, withStatus
}

// resourceFor returns the plural resource of a kind: from the CRDs, then discovery (this
// version, then any), then the usual guess.
func (e *fakeEnv) resourceFor(gvk schema.GroupVersionKind) string {
	if r, ok := e.crds[gvk]; ok {
		return r.resource
	}
	if r, ok := e.discovery.ResourceFor(gvk); ok {
		return r
	}
	if r, ok := e.discovery.ResourceForKind(gvk.GroupKind()); ok {
		return r
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.Resource
}

// inputObjects returns a copy of every named object of the input directory, once: an object
// found both in a per-object file and in a list file is taken from the per-object file, as
// GET would answer.
func inputObjects(in *contract.InputDir) []client.Object {
	type key struct{ group, resource, namespace, name string }
	index := map[key]int{}
	var objs []client.Object
	var fromList []bool
	for _, o := range in.Objects() {
		u := o.Object.DeepCopy()
		if u.GetName() == "" {
			continue // LIST would return it, GET never; a fake client cannot hold it
		}
		if u.GetNamespace() == "" && o.Namespace != "" && !o.Identity().IsNamespace() {
			u.SetNamespace(o.Namespace)
		}
		k := key{o.Group, o.Resource, u.GetNamespace(), u.GetName()}
		if i, dup := index[k]; dup {
			if fromList[i] && !o.InList {
				objs[i], fromList[i] = u, false
			}
			continue
		}
		index[k] = len(objs)
		objs = append(objs, u)
		fromList = append(fromList, o.InList)
	}
	return objs
}

// client builds a fake client over a fresh copy of the input objects, with funcs
// intercepting its calls.
func (e *fakeEnv) client(funcs interceptor.Funcs) (c client.WithWatch, err error) {
	objs := make([]client.Object, len(e.objects))
	for i, o := range e.objects {
		objs[i] = o.DeepCopyObject().(client.Object)
	}
	defer func() {
		// The fake client's builder panics on objects it cannot hold.
		if p := recover(); p != nil {
			c, err = nil, fmt.Errorf("load the input objects into the fake client: %v", p)
		}
	}()
	c = fake.NewClientBuilder().
		WithScheme(e.scheme).
		WithRESTMapper(e.mapper).
		WithObjects(objs...).
		WithStatusSubresource(e.withStatus...).
		WithInterceptorFuncs(funcs).
		Build()
	return c, nil
}
