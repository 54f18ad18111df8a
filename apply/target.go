package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/translate"
)

// Target applies planned mutations to one place: a cluster, or one namespace of one.
type Target interface {
	Name() string
	Apply(ctx context.Context, m contract.Mutation) (Result, error)
}

// DryRunner is a Target that can ask its server what a mutation would do without writing
// it. ApplyPlan validates every mutation of a plan on targets that are DryRunners.
type DryRunner interface {
	Target
	DryRun(ctx context.Context, m contract.Mutation) (Result, error)
}

// Change says what a write does (or would do) to the object.
type Change string

const (
	// ChangeCreate means the object did not exist.
	ChangeCreate Change = "create"
	// ChangeUpdate means the object existed and is changed.
	ChangeUpdate Change = "change"
	// ChangeNone means the write would not change the object (or the object to delete is
	// absent): it was skipped.
	ChangeNone Change = "unchanged"
	// ChangeDelete means the object existed and is deleted.
	ChangeDelete Change = "delete"
)

// Result is the outcome of one mutation on a target.
type Result struct {
	// Change is what the write did, or would do on a dry-run.
	Change Change
	// Skipped is true when nothing was sent because nothing would change.
	Skipped bool
	// Object is the object as the server stored it (or would store it); nil for deletes.
	Object *unstructured.Unstructured
	// Live is the object before the write; nil when it did not exist.
	Live *unstructured.Unstructured
}

// DefaultFieldManager is the field manager of Create and Update writes, and of Apply writes
// whose options and metadata name none.
const DefaultFieldManager = "topolayer"

// ErrOutsideNamespace is returned for a mutation outside the namespace a target is bound to.
var ErrOutsideNamespace = errors.New("outside the target's namespace")

// Options configures a ClusterTarget. The zero value writes anywhere on the cluster as the
// rest.Config's own identity.
type Options struct {
	// Impersonate is a service-account user name, system:serviceaccount:<namespace>:<name>.
	// Every request of the target is then made as that account: the target's writes are
	// bounded by the account's RBAC. Default: the rest.Config's identity.
	Impersonate string
	// Namespace bounds the target to one namespace (the hosted control plane's namespace on
	// a management cluster): a mutation of a cluster-scoped object or of another namespace
	// is refused with ErrOutsideNamespace.
	Namespace string
	// FieldManager manages the fields of Create and Update writes, and of Apply writes whose
	// options and metadata name no field manager. Default: DefaultFieldManager.
	FieldManager string
	// Operator is the operator label value (namespaces.LabelOperator) of the objects this
	// target writes. An existing object labelled for another operator is a conflict. Default:
	// the label of each body.
	Operator string
	// HostedControlPlane is the ownerReference set on every object written whose body carries
	// the annotation translate.AnnotationOwnerHCP (which is removed). See
	// ResolveHostedControlPlane. A body with the annotation on a target without it fails.
	HostedControlPlane *metav1.OwnerReference
	// RequireOwnership makes an existing object that carries no topolayer annotation or
	// label someone else's: a Create, Update, Apply, Patch or Delete of it is a conflict.
	// Status writes are allowed (the status of an object the environment created, such as a
	// shadow operator CR, is the operator's to write). Set it for hosted targets.
	RequireOwnership bool
}

// defaulted returns a copy of o with its defaults filled.
func (o Options) defaulted() Options {
	if o.FieldManager == "" {
		o.FieldManager = DefaultFieldManager
	}
	if o.HostedControlPlane != nil {
		ref := *o.HostedControlPlane
		o.HostedControlPlane = &ref
	}
	return o
}

// ParseServiceAccount splits a service-account user name, system:serviceaccount:ns:name.
func ParseServiceAccount(user string) (namespace, name string, err error) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	parts := strings.Split(rest, ":")
	if !ok || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("%q is not a service account user name (system:serviceaccount:<namespace>:<name>)", user)
	}
	return parts[0], parts[1], nil
}

// ClusterTarget is a Target over one API server, through a dynamic client and a RESTMapper
// built from discovery.
type ClusterTarget struct {
	name   string
	opts   Options
	client dynamic.Interface
	mapper meta.ResettableRESTMapper
}

var _ DryRunner = (*ClusterTarget)(nil)

// DefaultQPS and DefaultBurst are the client-side rate limits of a target whose
// configuration sets none.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// NewClusterTarget builds the target named name (the plan's cluster name) over cfg. cfg is
// copied; with Options.Impersonate, the copy impersonates the service account. A cfg without
// rate limits gets DefaultQPS and DefaultBurst.
func NewClusterTarget(name string, cfg *rest.Config, opts Options) (*ClusterTarget, error) {
	if cfg == nil {
		return nil, fmt.Errorf("target %s: no client configuration", name)
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.Burst == 0 && cfg.RateLimiter == nil {
		// client-go's default (5 requests per second) makes a plan of a dozen entries, up to
		// four requests each (read, dry-run, write), take seconds.
		cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	}
	if opts.Impersonate != "" {
		if _, _, err := ParseServiceAccount(opts.Impersonate); err != nil {
			return nil, fmt.Errorf("target %s: impersonate: %w", name, err)
		}
		cfg.Impersonate = rest.ImpersonationConfig{UserName: opts.Impersonate}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	return &ClusterTarget{
		name:   name,
		opts:   opts.defaulted(),
		client: dyn,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
	}, nil
}

// Name returns the cluster name the target was built for.
func (t *ClusterTarget) Name() string { return t.name }

// Apply writes m, unless it is a conflict or would change nothing.
func (t *ClusterTarget) Apply(ctx context.Context, m contract.Mutation) (Result, error) {
	return t.write(ctx, m, false)
}

// DryRun asks the server what m would do (dryRun=All): nothing is written.
func (t *ClusterTarget) DryRun(ctx context.Context, m contract.Mutation) (Result, error) {
	return t.write(ctx, m, true)
}

// resource returns the client of m's resource (namespaced when its kind is), after checking
// the target's namespace bound.
func (t *ClusterTarget) resource(m contract.Mutation) (dynamic.ResourceInterface, schema.GroupVersionKind, error) {
	gvr := m.Identity().GroupVersionResource()
	mapping, err := t.mapping(gvr)
	if err != nil {
		return nil, schema.GroupVersionKind{}, err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	ns := m.Metadata.Namespace
	if t.opts.Namespace != "" && (!namespaced || ns != t.opts.Namespace) {
		return nil, schema.GroupVersionKind{}, fmt.Errorf("%s: %w %s", m.Identity(), ErrOutsideNamespace, t.opts.Namespace)
	}
	if namespaced {
		if ns == "" {
			return nil, schema.GroupVersionKind{}, fmt.Errorf("%s: %s is namespaced and the mutation names no namespace", m.Identity(), gvr.GroupResource())
		}
		return t.client.Resource(gvr).Namespace(ns), mapping.GroupVersionKind, nil
	}
	return t.client.Resource(gvr), mapping.GroupVersionKind, nil
}

// mapping finds the REST mapping of gvr, refreshing discovery once when the resource is
// unknown (a CRD installed since the last look).
func (t *ClusterTarget) mapping(gvr schema.GroupVersionResource) (*meta.RESTMapping, error) {
	find := func() (*meta.RESTMapping, error) {
		gvk, err := t.mapper.KindFor(gvr)
		if err != nil {
			return nil, err
		}
		return t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	mapping, err := find()
	if meta.IsNoMatchError(err) {
		t.mapper.Reset()
		mapping, err = find()
	}
	if err != nil {
		return nil, fmt.Errorf("resource %s: %w", gvr, err)
	}
	return mapping, nil
}

// write does m, for real or as a dry-run.
func (t *ClusterTarget) write(ctx context.Context, m contract.Mutation, dryRun bool) (Result, error) {
	if !m.Metadata.Action.Valid() {
		return Result{}, fmt.Errorf("%s: unknown action %q", m.Identity(), m.Metadata.Action)
	}
	ri, gvk, err := t.resource(m)
	if err != nil {
		return Result{}, err
	}
	w := &writer{t: t, m: m, ri: ri, gvk: gvk, dryRun: dryRun}
	res, err := w.do(ctx)
	if err != nil {
		return res, fmt.Errorf("%s %s: %w", m.Metadata.Action, m.Identity(), err)
	}
	return res, nil
}

// writer is one mutation being written.
type writer struct {
	t      *ClusterTarget
	m      contract.Mutation
	ri     dynamic.ResourceInterface
	gvk    schema.GroupVersionKind
	dryRun bool

	opts   writeOptions
	desire *unstructured.Unstructured // the body, for actions that carry an object
	live   *unstructured.Unstructured // nil when absent
}

func (w *writer) subresources() []string {
	if w.m.Metadata.Action.IsStatus() {
		return []string{"status"}
	}
	return nil
}

func (w *writer) dryRunOpt(dry bool) []string {
	if dry {
		return []string{metav1.DryRunAll}
	}
	return nil
}

func (w *writer) do(ctx context.Context) (Result, error) {
	var err error
	action := w.m.Metadata.Action
	if w.opts, err = decodeOptions(w.m.Options); err != nil {
		return Result{}, err
	}
	if action.CarriesObject() {
		if w.desire, err = w.object(); err != nil {
			return Result{}, err
		}
	}
	if action == contract.ActionCreate && w.m.Metadata.Name == "" {
		// generateName: a new object every time.
		obj, err := w.ri.Create(ctx, w.desire, metav1.CreateOptions{DryRun: w.dryRunOpt(w.dryRun), FieldManager: w.t.opts.FieldManager})
		if err != nil {
			return Result{}, err
		}
		return Result{Change: ChangeCreate, Object: obj}, nil
	}
	live, err := w.ri.Get(ctx, w.m.Metadata.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return Result{}, fmt.Errorf("read the live object: %w", err)
	}
	w.live = live
	if live != nil {
		if err := checkOwnership(w.t.name, w.m, w.desire, live, w.t.opts.Operator, w.t.opts.RequireOwnership); err != nil {
			return Result{Live: live}, err
		}
	}

	if action == contract.ActionDelete {
		return w.delete(ctx)
	}
	if live == nil {
		if action != contract.ActionCreate && action != contract.ActionApply {
			return Result{}, apierrors.NewNotFound(w.m.Identity().GroupResource(), w.m.Metadata.Name)
		}
		obj, err := w.send(ctx, w.dryRun)
		if err != nil {
			return Result{}, err
		}
		return Result{Change: ChangeCreate, Object: obj}, nil
	}
	// The object exists: ask the server what the write would store, and skip it when that
	// is what is there.
	would, err := w.send(ctx, true)
	if err != nil {
		return Result{Live: live}, err
	}
	if Equivalent(live, would) {
		return Result{Change: ChangeNone, Skipped: true, Object: live, Live: live}, nil
	}
	if w.dryRun {
		return Result{Change: ChangeUpdate, Object: would, Live: live}, nil
	}
	obj, err := w.send(ctx, false)
	if err != nil {
		return Result{Live: live}, err
	}
	return Result{Change: ChangeUpdate, Object: obj, Live: live}, nil
}

// object decodes the body into the object to write: server-set fields stripped, the owner
// annotation turned into an ownerReference.
func (w *writer) object() (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(w.m.Body, &obj.Object); err != nil {
		return nil, fmt.Errorf("decode the body: %w", err)
	}
	if obj.Object == nil {
		return nil, errors.New("the body is empty")
	}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		obj.SetGroupVersionKind(w.gvk)
	}
	stripServerFields(obj)
	if err := setOwner(obj, w.t.opts.HostedControlPlane); err != nil {
		return nil, err
	}
	return obj, nil
}

// send makes the write request of the mutation's action; for Create of an existing object,
// a server-side apply of the body.
func (w *writer) send(ctx context.Context, dry bool) (*unstructured.Unstructured, error) {
	m := w.m.Metadata
	dryRun := w.dryRunOpt(dry)
	fieldManager := w.t.opts.FieldManager
	switch m.Action {
	case contract.ActionCreate:
		if w.live == nil {
			return w.ri.Create(ctx, w.desire, metav1.CreateOptions{DryRun: dryRun, FieldManager: fieldManager})
		}
		return w.applyPatch(ctx, fieldManager, true, dryRun)
	case contract.ActionUpdate, contract.ActionUpdateStatus:
		obj := w.desire.DeepCopy()
		obj.SetResourceVersion(w.live.GetResourceVersion())
		if m.Action == contract.ActionUpdateStatus {
			return w.ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{DryRun: dryRun, FieldManager: fieldManager})
		}
		return w.ri.Update(ctx, obj, metav1.UpdateOptions{DryRun: dryRun, FieldManager: fieldManager})
	case contract.ActionApply, contract.ActionApplyStatus:
		return w.applyPatch(ctx, w.applyFieldManager(), w.opts.Force, dryRun)
	case contract.ActionPatch, contract.ActionPatchStatus:
		pt, err := patchType(m.PatchType)
		if err != nil {
			return nil, err
		}
		body, err := yaml.YAMLToJSON(w.m.Body)
		if err != nil {
			return nil, fmt.Errorf("decode the patch: %w", err)
		}
		fm := w.opts.FieldManager
		if fm == "" {
			fm = m.FieldManager
		}
		if fm == "" {
			fm = fieldManager
		}
		return w.ri.Patch(ctx, m.Name, pt, body, metav1.PatchOptions{DryRun: dryRun, FieldManager: fm}, w.subresources()...)
	}
	return nil, fmt.Errorf("action %s has no write request", m.Action)
}

// applyFieldManager is the field manager of an Apply: the options file's, the metadata's,
// the target's.
func (w *writer) applyFieldManager() string {
	switch {
	case w.opts.FieldManager != "":
		return w.opts.FieldManager
	case w.m.Metadata.FieldManager != "":
		return w.m.Metadata.FieldManager
	}
	return w.t.opts.FieldManager
}

func (w *writer) applyPatch(ctx context.Context, fieldManager string, force bool, dryRun []string) (*unstructured.Unstructured, error) {
	body, err := w.desire.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return w.ri.Patch(ctx, w.m.Metadata.Name, types.ApplyYAMLPatchType, body,
		metav1.PatchOptions{DryRun: dryRun, FieldManager: fieldManager, Force: &force}, w.subresources()...)
}

func (w *writer) delete(ctx context.Context) (Result, error) {
	if w.live == nil {
		return Result{Change: ChangeNone, Skipped: true}, nil
	}
	opts := metav1.DeleteOptions{}
	if len(w.m.Body) > 0 {
		if err := yaml.Unmarshal(w.m.Body, &opts); err != nil {
			return Result{}, fmt.Errorf("decode the delete options: %w", err)
		}
	}
	if opts.Preconditions == nil {
		uid := w.live.GetUID()
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	opts.DryRun = w.dryRunOpt(w.dryRun)
	err := w.ri.Delete(ctx, w.m.Metadata.Name, opts)
	if apierrors.IsNotFound(err) {
		return Result{Change: ChangeNone, Skipped: true}, nil
	}
	if err != nil {
		return Result{Live: w.live}, err
	}
	return Result{Change: ChangeDelete, Live: w.live}, nil
}

// patchType maps a metadata patchType to the request's.
func patchType(s string) (types.PatchType, error) {
	switch s {
	case contract.PatchTypeJSON:
		return types.JSONPatchType, nil
	case contract.PatchTypeMerge:
		return types.MergePatchType, nil
	case contract.PatchTypeStrategicMerge:
		return types.StrategicMergePatchType, nil
	case contract.PatchTypeApply:
		return types.ApplyYAMLPatchType, nil
	}
	return "", fmt.Errorf("unknown patch type %q", s)
}

// stripServerFields removes what the server sets (contract.StripServerFields) and the
// deletion fields a body from another cluster may carry: a write never asks for them.
func stripServerFields(obj *unstructured.Unstructured) {
	contract.StripServerFields(obj.Object)
	for _, f := range []string{"deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
}

// setOwner turns the owner annotation into an ownerReference to owner.
func setOwner(obj *unstructured.Unstructured, owner *metav1.OwnerReference) error {
	ann := obj.GetAnnotations()
	name, ok := ann[translate.AnnotationOwnerHCP]
	if !ok {
		return nil
	}
	if owner == nil {
		return fmt.Errorf("the body asks for an ownerReference to HostedControlPlane %q (annotation %s) and the target has none", name, translate.AnnotationOwnerHCP)
	}
	if name != owner.Name {
		return fmt.Errorf("the body asks for an ownerReference to HostedControlPlane %q and the target's is %q", name, owner.Name)
	}
	delete(ann, translate.AnnotationOwnerHCP)
	if len(ann) == 0 {
		ann = nil
	}
	obj.SetAnnotations(ann)
	refs := obj.GetOwnerReferences()
	for i, r := range refs {
		if r.UID == owner.UID || (r.APIVersion == owner.APIVersion && r.Kind == owner.Kind && r.Name == owner.Name) {
			refs[i] = *owner
			obj.SetOwnerReferences(refs)
			return nil
		}
	}
	obj.SetOwnerReferences(append(refs, *owner))
	return nil
}
