package gather

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/check"
	"github.com/topolayer/topolayer/namespaces"
)

// Options configures Gather.
type Options struct {
	// Placement is the topology (topology.New): the clusters, names and where inputs live.
	Placement Placement
	// Inputs is the operator's input-resources; its applyConfigurationResources are read.
	Inputs *contract.InputResources
	// Outputs is the operator's output-resources; nil means it writes nothing, so every
	// input of a hosted topology is read from the guest (see Placement.Locate).
	Outputs *contract.OutputResources
	// Clusters are the client configurations by cluster name (Placement.Clusters). Each is
	// read live (NewAPIReader) unless Readers has the cluster.
	Clusters map[string]*rest.Config
	// Readers read the clusters instead of live requests, by cluster name: for example the
	// informer caches of topolayer run.
	Readers map[string]Reader
	// Discovery maps kinds and resources offline; nil means contract.DefaultDiscovery().
	Discovery *contract.Discovery
	// Operator is the operator the inputs are gathered for. A service-account-token Secret
	// is handed over only when topolayer wrote it for this operator (its operator label:
	// apply wrote it only for an account that was the operator's), besides naming an account
	// the operator declares; with Operator empty, none is.
	Operator string
}

// Result is what Gather read.
type Result struct {
	// Objects are the gathered objects in standalone form, ready for contract.WriteInputDir.
	Objects []*contract.InputObject
	// Skipped are the standalone identities that were not found (404, or a resource the
	// cluster does not serve).
	Skipped []contract.Identity
	// Projected are the identities filled from the HostedControlPlane (see Projections).
	Projected []contract.Identity
	// Warnings are problems that did not stop the gathering.
	Warnings []string
}

// Gather reads every applyConfigurationResources input (exact, label-selected, and
// ImplicitNamespacedReference references; generated-name entries are skipped) from where the
// topology keeps it (Placement.Locate) and returns it in standalone form: read from the management
// cluster, an object is mapped back with translate.Inverse; every object loses the
// server-set metadata a must-gather does not keep (uid, managedFields, selfLink; its
// resourceVersion, generation and creationTimestamp stay), the HostedControlPlane
// ownerReference and topolayer's annotations and label;
// status is kept. For every namespaced object read from the management cluster whose
// Namespace was not gathered, a Namespace object is synthesized (the hosted control plane's
// namespace absorbs it). Then the Projections fill declared config singletons that the guest
// lacks from the HostedControlPlane.
func Gather(ctx context.Context, opts Options) (*Result, error) {
	g, err := newGatherer(opts)
	if err != nil {
		return nil, err
	}
	l := opts.Inputs.ApplyConfigurationResources
	var errs []error
	for _, e := range l.ExactResources {
		if contract.IsNamePattern(e.Name) {
			errs = append(errs, g.pattern(ctx, exactID(e)))
			continue
		}
		errs = append(errs, g.exact(ctx, exactID(e)))
	}
	for _, s := range l.LabelSelectedResources {
		errs = append(errs, g.labelSelected(ctx, s))
	}
	for _, r := range l.ResourceReferences {
		errs = append(errs, g.reference(ctx, r))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	g.synthesizeNamespaces()
	if err := g.project(ctx); err != nil {
		return nil, err
	}
	return &g.res, nil
}

func exactID(e contract.ExactResourceID) contract.Identity {
	return contract.Identity{Group: e.Group, Version: e.Version, Resource: e.Resource, Namespace: e.Namespace, Name: e.Name}
}

type gatherer struct {
	opts    Options
	names   namespaces.Mapper
	inverse translate.Inverse
	readers map[string]Reader
	seen    map[contract.Key]*contract.InputObject
	// fromManagement are the namespaces of objects read from the management cluster.
	fromManagement map[string]bool
	// absorbed are declared Namespace inputs placed on the management cluster.
	absorbed map[string]bool
	res      Result
}

func newGatherer(opts Options) (*gatherer, error) {
	if opts.Placement == nil || opts.Inputs == nil {
		return nil, errors.New("gather: a placement and input-resources are required")
	}
	if opts.Discovery == nil {
		opts.Discovery = contract.DefaultDiscovery()
	}
	g := &gatherer{opts: opts, readers: map[string]Reader{}, seen: map[contract.Key]*contract.InputObject{}, fromManagement: map[string]bool{}, absorbed: map[string]bool{}}
	clusters := opts.Placement.Clusters()
	g.names = opts.Placement.Names()
	g.inverse = translate.Inverse{Names: g.names, Discovery: opts.Discovery}
	for _, c := range clusters {
		if r := opts.Readers[c]; r != nil {
			g.readers[c] = r
			continue
		}
		rc := opts.Clusters[c]
		if rc == nil {
			return nil, fmt.Errorf("gather: no client configuration for cluster %s", c)
		}
		r, err := NewAPIReader(c, rc)
		if err != nil {
			return nil, err
		}
		g.readers[c] = r
	}
	return g, nil
}

// exact gathers one object by its standalone identity and returns it (nil when skipped).
func (g *gatherer) exact(ctx context.Context, id contract.Identity) error {
	_, err := g.get(ctx, id)
	return err
}

// get gathers one object and returns its standalone form, or nil when it was not found.
func (g *gatherer) get(ctx context.Context, id contract.Identity) (*contract.InputObject, error) {
	if o, ok := g.seen[id.Key()]; ok {
		return o, nil
	}
	loc, err := g.opts.Placement.Locate(g.opts.Outputs, id)
	if err != nil {
		return nil, err
	}
	if loc.Absorbed {
		g.absorbed[id.Name] = true
		return nil, nil
	}
	obj, err := g.readers[loc.Cluster].Get(ctx, loc.Identity)
	if err != nil {
		return nil, err
	}
	if loc.Status != nil {
		if loc, obj, err = g.withStatus(ctx, loc, obj); err != nil {
			return nil, err
		}
	}
	if obj == nil {
		g.res.Skipped = append(g.res.Skipped, id)
		return nil, nil
	}
	o, src, err := g.standalone(loc.Cluster, loc.Identity, obj)
	if err != nil {
		return nil, err
	}
	if why := g.foreignToken(loc.Cluster, loc.Identity, src, obj); why != "" {
		g.res.Warnings = append(g.res.Warnings, why+": skipped")
		g.res.Skipped = append(g.res.Skipped, id)
		return nil, nil
	}
	if src.Key() != id.Key() {
		g.res.Warnings = append(g.res.Warnings, fmt.Sprintf("%s on %s maps back to %s, not %s: skipped", loc.Identity, loc.Cluster, src, id))
		g.res.Skipped = append(g.res.Skipped, id)
		return nil, nil
	}
	g.add(loc.Cluster, o)
	return o, nil
}

// withStatus completes obj, read at loc, with the status read at loc.Status: the user's
// object with the status the operator wrote. Where loc has no object, the object at
// loc.Status is returned whole, with that location; where loc.Status has none or no status,
// obj keeps its own.
func (g *gatherer) withStatus(ctx context.Context, loc Location, obj *unstructured.Unstructured) (Location, *unstructured.Unstructured, error) {
	at := *loc.Status
	written, err := g.readers[at.Cluster].Get(ctx, at.Identity)
	if err != nil {
		return loc, nil, err
	}
	switch {
	case obj == nil:
		return at, written, nil
	case written == nil:
		return loc, obj, nil
	}
	if status, ok := written.Object["status"]; ok {
		obj.Object["status"] = status
	}
	return loc, obj, nil
}

// add records a gathered object, once per standalone identity.
func (g *gatherer) add(cluster string, o *contract.InputObject) {
	k := o.Identity().Key()
	if _, ok := g.seen[k]; ok {
		return
	}
	g.seen[k] = o
	g.res.Objects = append(g.res.Objects, o)
	if g.opts.Placement.Bound(cluster) != "" && o.Namespace != "" {
		g.fromManagement[o.Namespace] = true
	}
}

// standalone maps an object read on cluster (target identity t) back to standalone form.
func (g *gatherer) standalone(cluster string, t contract.Identity, obj *unstructured.Unstructured) (*contract.InputObject, contract.Identity, error) {
	stripServerFields(obj, g.opts.Placement.Bound(cluster) != "")
	rn, err := kyaml.FromMap(obj.Object)
	if err != nil {
		return nil, contract.Identity{}, fmt.Errorf("%s on %s: %w", t, cluster, err)
	}
	out, src, warnings, err := g.inverse.Object(cluster, t, rn)
	if err != nil {
		return nil, contract.Identity{}, fmt.Errorf("on %s: %w", cluster, err)
	}
	g.res.Warnings = append(g.res.Warnings, warnings...)
	m, err := out.Map()
	if err != nil {
		return nil, contract.Identity{}, fmt.Errorf("%s on %s: %w", t, cluster, err)
	}
	u := &unstructured.Unstructured{Object: m}
	return &contract.InputObject{Group: src.Group, Resource: src.Resource, Namespace: src.Namespace, Object: u}, src, nil
}

// foreignToken returns why obj, read on cluster at t and mapping back to src, must not be
// handed to the operator: a service-account-token Secret of an account the operator does not
// declare (check.ForeignServiceAccountToken). "" otherwise. obj is as read: its account
// annotation names the account on cluster.
func (g *gatherer) foreignToken(cluster string, t, src contract.Identity, obj *unstructured.Unstructured) string {
	if t.Group != "" || t.Resource != "secrets" || obj.Object["type"] != check.SecretTypeServiceAccountToken {
		return ""
	}
	raw, err := kyaml.FromMap(obj.Object)
	if err != nil {
		return fmt.Sprintf("%s on %s: %v", t, cluster, err)
	}
	if why := check.ForeignServiceAccountToken(g.names, g.opts.Outputs, cluster, t, src, raw); why != "" {
		return why
	}
	if owner := obj.GetLabels()[namespaces.LabelOperator]; g.opts.Operator == "" || owner != g.opts.Operator {
		return fmt.Sprintf("%s on %s holds a service account's token and was not written by topolayer for operator %q (%s)", t, cluster, g.opts.Operator, namespaces.DescribeOwner(owner))
	}
	return ""
}

// stripServerFields removes what the server sets that an input directory does not keep
// (contract.StripInputServerFields), and on the management cluster the HostedControlPlane
// ownerReference that apply adds.
func stripServerFields(obj *unstructured.Unstructured, management bool) {
	contract.StripInputServerFields(obj.Object)
	if !management {
		return
	}
	refs := obj.GetOwnerReferences()
	kept := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool {
		return r.Kind == "HostedControlPlane" && strings.HasPrefix(r.APIVersion, "hypershift.openshift.io/")
	})
	if len(kept) != len(refs) {
		if len(kept) == 0 {
			unstructured.RemoveNestedField(obj.Object, "metadata", "ownerReferences")
		} else {
			obj.SetOwnerReferences(kept)
		}
	}
}

// pattern gathers the objects of an exact input whose name is a pattern (contract.MatchName):
// its namespace is listed on the cluster where a name the pattern matches is placed (where
// the manager watches it), keeping the objects whose standalone names match and that are
// placed there.
func (g *gatherer) pattern(ctx context.Context, id contract.Identity) error {
	probe := id
	probe.Name = contract.NameMatchedBy(id.Name)
	loc, err := g.opts.Placement.Locate(g.opts.Outputs, probe)
	if err == nil {
		matches := func(src contract.Identity, cluster string) bool {
			return src.Group == id.Group && src.Resource == id.Resource && src.Namespace == id.Namespace &&
				contract.MatchName(id.Name, src.Name) && g.placedOn(src, cluster)
		}
		err = g.listSelected(ctx, loc.Cluster, probe, id.Namespace, "", matches)
	}
	if err != nil {
		return fmt.Errorf("exactResources %s %s/%s: %w", id.GroupResource(), id.Namespace, id.Name, err)
	}
	return nil
}

// placedOn reports whether the input src is read on cluster: placed there, not absorbed.
func (g *gatherer) placedOn(src contract.Identity, cluster string) bool {
	loc, err := g.opts.Placement.Locate(g.opts.Outputs, src)
	return err == nil && loc.Cluster == cluster && !loc.Absorbed
}

// labelSelected lists a label-selected input: on the guest (or the one cluster) in its
// namespace or everywhere; on the management cluster only in the hosted control plane's
// namespace, keeping the objects that map back into the selection and are placed there.
func (g *gatherer) labelSelected(ctx context.Context, s contract.LabelSelectedResource) error {
	sel, err := metav1.LabelSelectorAsSelector(&s.LabelSelector)
	if err != nil {
		return fmt.Errorf("labelSelectedResources %s: %w", s.GroupVersionResource(), err)
	}
	probe := contract.Identity{Group: s.Group, Version: s.Version, Resource: s.Resource, Namespace: s.Namespace, Name: "probe"}
	matches := func(src contract.Identity, cluster string) bool {
		return src.Group == s.Group && src.Resource == s.Resource && (s.Namespace == "" || src.Namespace == s.Namespace) && g.placedOn(src, cluster)
	}
	var errs []error
	for _, cluster := range g.opts.Placement.Clusters() {
		errs = append(errs, g.listSelected(ctx, cluster, probe, s.Namespace, sel.String(), matches))
	}
	return errors.Join(errs...)
}

// listSelected lists a selection on one cluster: where it is (its namespace or everywhere)
// on a cluster that is not confined; on a confined cluster, in its namespace, at the
// selection's resource there (a shadow resource for a cluster-scoped one). Namespaces are
// absorbed on a confined cluster: never listed there.
func (g *gatherer) listSelected(ctx context.Context, cluster string, probe contract.Identity, ns, selector string, keep func(contract.Identity, string) bool) error {
	if g.opts.Placement.Bound(cluster) == "" {
		return g.list(ctx, cluster, probe, ns, selector, keep)
	}
	if probe.Namespace == "" {
		if namespaced, known := g.opts.Discovery.Namespaced(probe.GroupResource()); known && namespaced {
			probe.Namespace = "probe"
		} else if !known && g.servedNamespaced(probe) {
			probe.Namespace = "probe"
		}
	}
	if probe.IsNamespace() {
		return nil
	}
	t, err := g.names.ToTarget(cluster, probe)
	if err != nil {
		return err
	}
	return g.list(ctx, cluster, t, t.Namespace, selector, keep)
}

// servedNamespaced asks the clusters that are not confined whether they serve probe's
// resource as a namespaced one.
func (g *gatherer) servedNamespaced(probe contract.Identity) bool {
	for _, c := range g.opts.Placement.Clusters() {
		if g.opts.Placement.Bound(c) != "" {
			continue
		}
		if namespaced, err := g.readers[c].Namespaced(probe.GroupVersionResource()); err == nil && namespaced {
			return true
		}
	}
	return false
}

// list lists resource t (its group, version and resource) on cluster in namespace ns.
func (g *gatherer) list(ctx context.Context, cluster string, t contract.Identity, ns, selector string, keep func(contract.Identity, string) bool) error {
	items, err := g.readers[cluster].List(ctx, t.GroupVersionResource(), ns, selector)
	if err != nil {
		return err
	}
	for _, obj := range items {
		id := t
		id.Namespace, id.Name = obj.GetNamespace(), obj.GetName()
		o, src, err := g.standalone(cluster, id, obj)
		if err != nil {
			g.res.Warnings = append(g.res.Warnings, fmt.Sprintf("%v: skipped", err))
			continue
		}
		if why := g.foreignToken(cluster, id, src, obj); why != "" {
			g.res.Warnings = append(g.res.Warnings, why+": skipped")
			continue
		}
		if keep(src, cluster) {
			g.add(cluster, o)
		}
	}
	return nil
}

// reference gathers the referring object and every object its JSONPath names.
func (g *gatherer) reference(ctx context.Context, r contract.ResourceReference) error {
	if r.Type != contract.ImplicitNamespacedReference || r.ImplicitNamespacedReference == nil {
		g.res.Warnings = append(g.res.Warnings, fmt.Sprintf("resource reference of type %s from %s: not supported, skipped", r.Type, exactID(r.ReferringResource)))
		return nil
	}
	referring, err := g.get(ctx, exactID(r.ReferringResource))
	if err != nil || referring == nil {
		return err
	}
	ref := r.ImplicitNamespacedReference
	names, err := contract.EvaluateNames(ref.NameJSONPath, referring.Object.Object)
	if err != nil {
		return fmt.Errorf("resource reference from %s: %w", exactID(r.ReferringResource), err)
	}
	var errs []error
	for _, n := range names {
		_, err := g.get(ctx, contract.Identity{Group: ref.Group, Version: ref.Version, Resource: ref.Resource, Namespace: ref.Namespace, Name: n})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// synthesizeNamespaces adds the Namespace objects that the management side absorbs: those of
// namespaced objects read there, and declared Namespace inputs placed there.
func (g *gatherer) synthesizeNamespaces() {
	all := maps.Clone(g.absorbed)
	maps.Copy(all, g.fromManagement)
	for _, ns := range slices.Sorted(maps.Keys(all)) {
		if _, ok := g.seen[contract.Key{Resource: "namespaces", Name: ns}]; ok {
			continue
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
		}}
		g.add("", &contract.InputObject{Resource: "namespaces", Object: u})
	}
}

// Reader reads one cluster.
type Reader interface {
	// Get reads one object (id's version); nil, nil when it does not exist or the cluster
	// does not serve its resource.
	Get(ctx context.Context, id contract.Identity) (*unstructured.Unstructured, error)
	// List lists a resource in ns ("" for all namespaces) by a label selector ("" for all);
	// nothing when the cluster does not serve it.
	List(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) ([]*unstructured.Unstructured, error)
	// Namespaced reports whether the cluster serves gvr as a namespaced resource.
	Namespaced(gvr schema.GroupVersionResource) (bool, error)
}

// NewAPIReader returns a Reader that sends every read to the cluster's API server, through
// controller-runtime's client and a dynamic RESTMapper (discovery, refreshed when a resource
// is not found); name is the cluster's name, for errors.
func NewAPIReader(name string, cfg *rest.Config) (Reader, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	c, err := client.New(cfg, client.Options{HTTPClient: hc, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	return ClientReader{Name: name, Reader: c, Mapper: mapper}, nil
}

// ClientReader is a Reader over a controller-runtime client.Reader: a live client
// (NewAPIReader) or a cache (the shared informers of topolayer run).
type ClientReader struct {
	// Name is the cluster's name, for errors.
	Name string
	// Reader reads the objects.
	Reader client.Reader
	// Mapper maps resources to kinds and scopes.
	Mapper meta.RESTMapper
}

var _ Reader = ClientReader{}

// kind returns the kind of gvr; ok is false when the cluster does not serve it.
func (r ClientReader) kind(gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool, error) {
	gvk, err := r.Mapper.KindFor(gvr)
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionKind{}, false, nil
	}
	if err != nil {
		return schema.GroupVersionKind{}, false, fmt.Errorf("cluster %s: resource %s: %w", r.Name, gvr, err)
	}
	return gvk, true, nil
}

// Get implements Reader.
func (r ClientReader) Get(ctx context.Context, id contract.Identity) (*unstructured.Unstructured, error) {
	gvk, ok, err := r.kind(id.GroupVersionResource())
	if err != nil || !ok {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err = r.Reader.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: id.Name}, u)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: get %s: %w", r.Name, id, err)
	}
	return u, nil
}

// List implements Reader.
func (r ClientReader) List(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) ([]*unstructured.Unstructured, error) {
	gvk, ok, err := r.kind(gvr)
	if err != nil || !ok {
		return nil, err
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list %s: selector %q: %w", r.Name, gvr, selector, err)
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := r.Reader.List(ctx, l, opts...); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("cluster %s: list %s in %q: %w", r.Name, gvr, ns, err)
	}
	out := make([]*unstructured.Unstructured, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
		out[i].SetGroupVersionKind(gvk)
	}
	return out, nil
}

// Namespaced implements Reader.
func (r ClientReader) Namespaced(gvr schema.GroupVersionResource) (bool, error) {
	gvk, ok, err := r.kind(gvr)
	if err != nil || !ok {
		return false, err
	}
	m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, fmt.Errorf("cluster %s: resource %s: %w", r.Name, gvr, err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}
