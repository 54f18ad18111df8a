package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
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
	// ChangeAdopt means the object existed without topolayer's marks and is taken over
	// (Options.Adopt): same object, its field ownership moved, topolayer's marks added.
	ChangeAdopt Change = "adopt"
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
	// Intermediate are the resourceVersions that requests of the write left before its
	// last one (the managedFields patch of an adoption), so that a watcher knows the
	// changes they cause as the write's own.
	Intermediate []string
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
	// HostedControlPlane is the ownerReference (see ResolveHostedControlPlane) that the
	// target adds to every object of its Namespace that it creates, updates or applies whole
	// (Create, Update, Apply): not to status writes, patches, deletions or Events. It is a
	// property of the management target of a hosted topology; it needs Namespace (an owner
	// must be in its object's namespace) and is ignored without it. Bodies of older plans
	// that still carry the annotation translate.AnnotationOwnerHCP lose it.
	HostedControlPlane *metav1.OwnerReference
	// RequireOwnership makes an existing object that carries no topolayer annotation or
	// label someone else's: a Create, Update, Apply, Patch or Delete of it is a conflict.
	// Status writes are allowed (the status of an object the environment created, such as a
	// shadow operator CR, is the operator's to write). Set it for hosted targets.
	RequireOwnership bool
	// Adopt, when not nil, takes over an existing object that carries no topolayer mark
	// (no operator label, no standalone identity annotations) instead of refusing it: the
	// write keeps the object (same uid), adds the marks, and first moves the field ownership
	// of Adopt.FieldManagers to the write's field manager. An object marked by another
	// operator or source stays a conflict. nil: such an object is a conflict on a target
	// with RequireOwnership, and written over without moving ownership otherwise.
	Adopt *Adoption
	// Admission, when not nil, judges what every Patch of the object makes of it: such a
	// patch is always asked of the server with a dry-run (dryRun=All) before anything of the
	// plan is written, and the object the server returns is judged (see Admission). It is a
	// property of the management target of a hosted topology, composed by the topology from
	// the engine's allow-list and policy.
	Admission Admission
	// Cache, when not nil, holds copies of some objects of the target's cluster (the
	// informers of the caller's watches). A write that the cached object proves a no-op is
	// skipped without any request: no read, no dry-run, no write. Anything else (an object
	// the cache does not hold, one the comparison does not prove unchanged, a conflict, an
	// adoption) is asked of the server as without a cache.
	Cache Cache
}

// Cache is what a ClusterTarget reads of its cluster without asking the server: an
// informer's store. A cached object may be stale; a write is skipped on it only when the
// object holds everything the write would set (AppliedNoOp, UpdatedNoOp, PatchedNoOp).
type Cache interface {
	// Cached returns a copy of the cached object of resource gvr named namespace/name
	// ("" for a cluster-scoped one); false when the cache does not hold it (the resource or
	// the namespace is not cached, or the object is absent).
	Cached(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool)
}

// Adoption is the policy of Options.Adopt.
type Adoption struct {
	// FieldManagers are the previous managers (a resident operator's field manager) whose
	// server-side-apply field ownership moves to the writing field manager on adoption.
	FieldManagers []string
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
	if o.Adopt != nil {
		a := Adoption{FieldManagers: slices.Clone(o.Adopt.FieldManagers)}
		o.Adopt = &a
	}
	return o
}

// ParseServiceAccount splits a service-account user name, system:serviceaccount:ns:name
// (serviceaccount.SplitUsername, with an error that says what is expected).
func ParseServiceAccount(user string) (namespace, name string, err error) {
	namespace, name, err = serviceaccount.SplitUsername(user)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a service account user name (system:serviceaccount:<namespace>:<name>): %w", user, err)
	}
	return namespace, name, nil
}

// ClusterTarget is a Target over one API server, through a dynamic client and a RESTMapper
// built from discovery.
type ClusterTarget struct {
	name   string
	opts   Options
	client dynamic.Interface
	mapper meta.ResettableRESTMapper

	mu sync.Mutex
	// written are the objects this target's server-side applies left, by resource,
	// namespace and name: the next apply of one sends its resourceVersion as a
	// precondition instead of reading it first.
	written map[writtenKey]*unstructured.Unstructured
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
		// three requests each (read, dry-run, write), take seconds.
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

// resource returns the client of m's resource (namespaced when its kind is) and its REST
// mapping, after checking the target's namespace bound.
func (t *ClusterTarget) resource(m contract.Mutation) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	gvr := m.Identity().GroupVersionResource()
	mapping, err := t.mapping(gvr)
	if err != nil {
		return nil, nil, err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	ns := m.Metadata.Namespace
	if t.opts.Namespace != "" && (!namespaced || ns != t.opts.Namespace) {
		return nil, nil, fmt.Errorf("%s: %w %s", m.Identity(), ErrOutsideNamespace, t.opts.Namespace)
	}
	if namespaced {
		if ns == "" {
			return nil, nil, fmt.Errorf("%s: %s is namespaced and the mutation names no namespace", m.Identity(), gvr.GroupResource())
		}
		return t.client.Resource(gvr).Namespace(ns), mapping, nil
	}
	return t.client.Resource(gvr), mapping, nil
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

// write does m, for real or as a dry-run: the two passes of prepare and commit.
func (t *ClusterTarget) write(ctx context.Context, m contract.Mutation, dryRun bool) (Result, error) {
	level := askChanged
	if dryRun {
		level = askAll
	}
	w, res, err := t.prepare(ctx, m, nil, level, true)
	if err != nil || dryRun {
		return res, err
	}
	return w.commit(ctx)
}

// ask says what prepare asks the server besides the live object.
type ask int

const (
	// askNothing decides the write from the live object alone (and the cache): the write,
	// when made, is its own validation, and tells whether it changed anything.
	askNothing ask = iota
	// askChanged asks a dry-run where the comparison cannot prove an existing object
	// unchanged, to skip the write when the server would store what is there.
	askChanged
	// askAll asks a dry-run of every write: a plan's validation, before anything is written.
	askAll
)

// prepare reads what a write of m needs and decides what it would do, without writing: the
// body parsed once (or obj, an already parsed body, when not nil; it is not modified), the
// live object read once, ownership checked. An existing object that the comparison of the
// body with it shows unchanged costs that one read; so does a write decided without asking
// more (askNothing). With askChanged and askAll the server is asked with a dry-run as ask
// says. With cached set, the target's Cache is looked at first: a write that the cached
// object proves a no-op costs no request at all. The returned writer keeps all of it for
// commit.
func (t *ClusterTarget) prepare(ctx context.Context, m contract.Mutation, obj *unstructured.Unstructured, level ask, cached bool) (*writer, Result, error) {
	if !m.Metadata.Action.Valid() {
		return nil, Result{}, fmt.Errorf("%s: unknown action %q", m.Identity(), m.Metadata.Action)
	}
	ri, mapping, err := t.resource(m)
	if err != nil {
		return nil, Result{}, err
	}
	w := &writer{t: t, m: m, ri: ri, gvk: mapping.GroupVersionKind, gvr: mapping.Resource, namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}
	if err := w.parse(obj); err != nil {
		return nil, Result{}, fmt.Errorf("%s %s: %w", m.Metadata.Action, m.Identity(), err)
	}
	if cached {
		if res, ok := w.cachedNoOp(ctx, mapping.Resource); ok {
			w.decided = res
			return w, res, nil
		}
	}
	res, err := w.decide(ctx, cached)
	if err == nil && !res.Skipped && (level == askAll || (level == askChanged && (res.Change == ChangeUpdate || res.Change == ChangeAdopt))) {
		res, err = w.dryRun(ctx, res)
		w.asked = err == nil
	}
	if err != nil {
		return nil, res, fmt.Errorf("%s %s: %w", m.Metadata.Action, m.Identity(), err)
	}
	w.decided = res
	return w, res, nil
}

// writer is one mutation on a target: what prepare learned of it, kept for commit.
type writer struct {
	t          *ClusterTarget
	m          contract.Mutation
	ri         dynamic.ResourceInterface
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool

	opts   writeOptions
	desire *unstructured.Unstructured // the object to write, for actions that carry one
	patch  []byte                     // the JSON patch body, for Patch actions
	delete metav1.DeleteOptions       // for Delete
	live   *unstructured.Unstructured // nil when absent
	// remembered is set when live is the object this target's last write left, not read:
	// the write then carries its resourceVersion as a precondition (see decide).
	remembered bool
	decided    Result // what the write does, as prepare found
	asked      bool   // decided is the server's answer to a dry-run
	adopt      bool   // the write adopts live (Options.Adopt)
	moveFields []byte // the managedFields patch sent before an adopting write; nil for none
}

// parse decodes the options and the body once: the object to write (obj when not nil),
// the patch, or the delete options.
func (w *writer) parse(obj *unstructured.Unstructured) error {
	var err error
	if w.opts, err = decodeOptions(w.m.Options); err != nil {
		return err
	}
	action := w.m.Metadata.Action
	switch {
	case action.CarriesObject():
		if obj != nil {
			w.desire = obj.DeepCopy()
		} else if w.m.Object != nil {
			w.desire = w.m.Object.DeepCopy()
		} else if w.desire, err = decodeObject(w.m.Body); err != nil {
			return err
		}
		w.finish(w.desire)
	case action == contract.ActionPatch || action == contract.ActionPatchStatus:
		if w.patch, err = yaml.YAMLToJSON(w.m.Body); err != nil {
			return fmt.Errorf("decode the patch: %w", err)
		}
	case action == contract.ActionDelete:
		if len(w.m.Body) > 0 {
			if err := yaml.Unmarshal(w.m.Body, &w.delete); err != nil {
				return fmt.Errorf("decode the delete options: %w", err)
			}
		}
	}
	return nil
}

// decodeObject decodes a body.
func decodeObject(body []byte) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(body, &obj.Object); err != nil {
		return nil, fmt.Errorf("decode the body: %w", err)
	}
	if obj.Object == nil {
		return nil, errors.New("the body is empty")
	}
	return obj, nil
}

// finish makes obj the object to write: its kind filled, server-set fields and the former
// owner annotation stripped, and, on a target with a HostedControlPlane, the ownerReference
// to it.
func (w *writer) finish(obj *unstructured.Unstructured) {
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		obj.SetGroupVersionKind(w.gvk)
	}
	stripServerFields(obj)
	// Plans made before the owner became the target's property ask for it by annotation:
	// the target's owner answers them, and the annotation never reaches the server.
	if ann := obj.GetAnnotations(); ann != nil {
		if _, ok := ann[translate.AnnotationOwnerHCP]; ok {
			delete(ann, translate.AnnotationOwnerHCP)
			if len(ann) == 0 {
				ann = nil
			}
			obj.SetAnnotations(ann)
		}
	}
	if w.ownedByHostedControlPlane() {
		setOwner(obj, w.t.opts.HostedControlPlane)
	}
}

// ownedByHostedControlPlane reports whether the target's HostedControlPlane owns the object
// written: a namespaced object of the target's namespace, written whole (Create, Update,
// Apply; not a status write), and not an Event.
func (w *writer) ownedByHostedControlPlane() bool {
	o := w.t.opts
	switch w.m.Metadata.Action {
	case contract.ActionCreate, contract.ActionUpdate, contract.ActionApply:
	default:
		return false
	}
	return o.HostedControlPlane != nil && o.Namespace != "" && w.namespaced &&
		w.m.Metadata.Namespace == o.Namespace && w.gvk.Kind != "Event"
}

func (w *writer) subresources() []string {
	if w.m.Metadata.Action.IsStatus() {
		return []string{"status"}
	}
	return nil
}

func dryRunOpt(dry bool) []string {
	if dry {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// decide reads the live object (or takes the one the target's last write left, see
// remembered) and decides what the write would do without asking the server anything else:
// ChangeNone (skipped: a proven no-op, an absent object to delete, a namespace that is shared
// ground), ChangeCreate, ChangeDelete, ChangeAdopt or ChangeUpdate (not proven a no-op: the
// write, or a dry-run of it, tells). Ownership is checked here, and the adoption prepared.
func (w *writer) decide(ctx context.Context, remember bool) (Result, error) {
	action := w.m.Metadata.Action
	if action == contract.ActionCreate && w.m.Metadata.Name == "" {
		return Result{Change: ChangeCreate}, nil // generateName: a new object every time
	}
	var live *unstructured.Unstructured
	if r := w.recalled(remember); r != nil {
		live, w.remembered = r, true
	} else {
		var err error
		live, err = w.ri.Get(ctx, w.m.Metadata.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return Result{}, fmt.Errorf("read the live object: %w", err)
		}
	}
	w.live = live
	if live != nil && action == contract.ActionCreate && isNamespace(w.m.Identity()) && sourceOf(live) == nil && live.GetLabels()[namespaces.LabelOperator] == "" {
		// A namespace is shared ground: creating one that exists (the installer's, another
		// operator's) means it is there, as the operator's own Create would have found
		// (AlreadyExists). Nothing is written; nothing is taken over.
		return Result{Change: ChangeNone, Skipped: true, Object: live, Live: live}, nil
	}
	if live != nil {
		adopt, err := checkOwnership(w.t.name, w.m, w.desire, live, w.t.opts.Operator, w.t.opts.RequireOwnership, w.t.opts.Adopt != nil)
		if err != nil {
			return Result{Live: live}, err
		}
		if adopt {
			if err := w.prepareAdoption(); err != nil {
				return Result{Live: live}, err
			}
		}
		// A condition's time moves only on a real transition: conditions the operator
		// re-stamped without a change keep the live time, in the comparison and the write.
		if w.desire != nil {
			w.desire = CarryTransitionTimes(w.desire, live)
			w.keepOperatorLabel(w.desire, live)
		}
	}
	switch {
	case action == contract.ActionDelete && live == nil:
		return Result{Change: ChangeNone, Skipped: true}, nil
	case action == contract.ActionDelete:
		return Result{Change: ChangeDelete, Live: live}, nil
	case live == nil && action != contract.ActionCreate && action != contract.ActionApply:
		return Result{}, apierrors.NewNotFound(w.m.Identity().GroupResource(), w.m.Metadata.Name)
	case live == nil:
		return Result{Change: ChangeCreate}, nil
	case w.adopt:
		// The object is taken over: the write happens whatever the comparison says, for the
		// marks and the field ownership.
		return Result{Change: ChangeAdopt, Live: live}, nil
	case !w.remembered && w.provenNoOp(w.desire, live):
		// A server-side apply of fields that the live object already holds, and that drops
		// none of the fields its manager applied before, changes nothing.
		return Result{Change: ChangeNone, Skipped: true, Object: live, Live: live}, nil
	}
	return Result{Change: ChangeUpdate, Live: live}, nil
}

// recalled returns, for a server-side apply that changes the object this target's last
// write left (remember set), that object: the write needs no read, it carries the object's
// resourceVersion as a precondition. An apply that the remembered object shows unchanged is
// decided on the live object (a read, not a write), and so is every other action.
func (w *writer) recalled(remember bool) *unstructured.Unstructured {
	action := w.m.Metadata.Action
	if !remember || w.desire == nil || (action != contract.ActionApply && action != contract.ActionApplyStatus) {
		return nil
	}
	r := w.t.recall(w.gvr, w.m.Metadata.Namespace, w.m.Metadata.Name)
	if r == nil {
		return nil
	}
	if w.unchangedOn(r) {
		return nil
	}
	return r
}

// unchangedOn reports whether the comparison proves the write a no-op on obj, an object the
// server held (read, cached or remembered), as decide would compare it: with the conditions'
// times and the operator label carried over from obj to a copy of the object to write.
func (w *writer) unchangedOn(obj *unstructured.Unstructured) bool {
	desire := w.desire
	if desire != nil {
		desire = CarryTransitionTimes(desire, obj) // a copy
		w.keepOperatorLabel(desire, obj)
	}
	return w.provenNoOp(desire, obj)
}

// dryRun asks the server what the write decide decided would do (dryRun=All), and makes an
// update that would store what is there a skip. Nothing is written. A remembered object
// that is not the live one any more is read, and the write decided and asked again.
func (w *writer) dryRun(ctx context.Context, res Result) (Result, error) {
	out, err := w.dryRunOnce(ctx, res)
	if err != nil && w.stale(err) {
		if res, err = w.redecide(ctx); err != nil || res.Skipped {
			return res, err
		}
		return w.dryRunOnce(ctx, res)
	}
	return out, err
}

// stale reports whether err says that the object the write remembered (see recalled) is not
// the live one any more: someone changed or removed it since this target's last write.
func (w *writer) stale(err error) bool {
	return w.remembered && (apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsInvalid(err))
}

// redecide forgets the remembered object, reads the live one and decides the write again.
func (w *writer) redecide(ctx context.Context) (Result, error) {
	w.t.forget(w.gvr, w.m.Metadata.Namespace, w.m.Metadata.Name)
	w.remembered = false
	res, err := w.decide(ctx, false)
	if err == nil {
		w.decided = res
	}
	return res, err
}

func (w *writer) dryRunOnce(ctx context.Context, res Result) (Result, error) {
	switch res.Change {
	case ChangeCreate:
		var obj *unstructured.Unstructured
		var err error
		if w.m.Metadata.Action == contract.ActionCreate && w.m.Metadata.Name == "" {
			obj, err = w.ri.Create(ctx, w.desire, metav1.CreateOptions{DryRun: dryRunOpt(true), FieldManager: w.t.opts.FieldManager})
		} else {
			obj, err = w.send(ctx, true)
		}
		if err != nil {
			return Result{}, err
		}
		return Result{Change: ChangeCreate, Object: obj}, nil
	case ChangeDelete:
		if err := w.sendDelete(ctx, true); apierrors.IsNotFound(err) {
			return Result{Change: ChangeNone, Skipped: true}, nil
		} else if err != nil {
			return Result{Live: w.live}, err
		}
		return res, nil
	case ChangeAdopt:
		// The dry-run forces a server-side apply, because the fields it would conflict on
		// are the previous managers', moved before the write.
		would, err := w.sendDry(ctx, true)
		if err != nil {
			return Result{Live: w.live}, err
		}
		return Result{Change: ChangeAdopt, Object: would, Live: w.live}, nil
	case ChangeUpdate:
		would, err := w.send(ctx, true)
		if err != nil {
			return Result{Live: w.live}, err
		}
		if Equivalent(w.live, would) {
			return Result{Change: ChangeNone, Skipped: true, Object: w.live, Live: w.live}, nil
		}
		return Result{Change: ChangeUpdate, Object: would, Live: w.live}, nil
	}
	return res, nil
}

// cachedNoOp decides the write from the target's Cache alone: when the cache holds the
// object, the object is ours to write (no conflict, no adoption), and the comparison of the
// body with the cached object proves that the write changes nothing, the write is skipped
// and costs no request. ok is false otherwise: check asks the server. The cached object may
// be stale; a skip needs it to hold everything the write would set, so a stale object that
// lacks a field goes to the server. Deletions and generateName creates always do (an absent
// object proves nothing). w.desire is not modified.
func (w *writer) cachedNoOp(ctx context.Context, gvr schema.GroupVersionResource) (Result, bool) {
	c, md := w.t.opts.Cache, w.m.Metadata
	if c == nil || md.Name == "" || md.Action == contract.ActionDelete {
		return Result{}, false
	}
	cached, ok := c.Cached(ctx, gvr, md.Namespace, md.Name)
	if !ok || cached == nil {
		return Result{}, false
	}
	skipped := Result{Change: ChangeNone, Skipped: true, Object: cached, Live: cached}
	if md.Action == contract.ActionCreate && isNamespace(w.m.Identity()) && sourceOf(cached) == nil && cached.GetLabels()[namespaces.LabelOperator] == "" {
		return skipped, true // shared ground, as check decides on the live Namespace
	}
	adopt, err := checkOwnership(w.t.name, w.m, w.desire, cached, w.t.opts.Operator, w.t.opts.RequireOwnership, w.t.opts.Adopt != nil)
	if err != nil || adopt {
		return Result{}, false
	}
	if !w.unchangedOn(cached) {
		return Result{}, false
	}
	w.live = cached
	return skipped, true
}

// commit makes the write prepare decided, with what it read: one request, or none for a
// skipped write.
func (w *writer) commit(ctx context.Context) (Result, error) {
	res, err := w.write(ctx)
	if err != nil && w.stale(err) {
		// The object is not the one this target's last write left (someone changed it
		// since): read it, decide again and write.
		if _, err = w.redecide(ctx); err != nil {
			return Result{Live: w.live}, fmt.Errorf("%s %s: %w", w.m.Metadata.Action, w.m.Identity(), err)
		}
		res, err = w.write(ctx)
	}
	if err != nil {
		return Result{Live: w.live}, fmt.Errorf("%s %s: %w", w.m.Metadata.Action, w.m.Identity(), err)
	}
	// What the server holds now, as far as this write knows: the object it wrote, or the one
	// it read and left as it was.
	switch {
	case res.Change == ChangeDelete || res.Object == nil || w.m.Metadata.Name == "":
		w.t.forget(w.gvr, w.m.Metadata.Namespace, w.m.Metadata.Name)
	default:
		w.t.remember(w.gvr, res.Object)
	}
	return res, nil
}

// write sends the write prepare decided: one request (two for an adoption that moves field
// ownership first), none for a skipped write. An update decided without a dry-run that the
// server stored as it was (the same resourceVersion) is reported skipped.
func (w *writer) write(ctx context.Context) (Result, error) {
	res := w.decided
	if res.Skipped {
		return res, nil
	}
	var err error
	switch res.Change {
	case ChangeDelete:
		err = w.sendDelete(ctx, false)
		if apierrors.IsNotFound(err) {
			return Result{Change: ChangeNone, Skipped: true}, nil
		}
		res.Object = nil
	case ChangeCreate:
		if w.m.Metadata.Action == contract.ActionCreate && w.m.Metadata.Name == "" {
			res.Object, err = w.ri.Create(ctx, w.desire, metav1.CreateOptions{FieldManager: w.t.opts.FieldManager})
		} else {
			res.Object, err = w.send(ctx, false)
		}
	case ChangeAdopt:
		if err = w.sendMoveFields(ctx); err == nil {
			if w.moveFields != nil {
				res.Intermediate = append(res.Intermediate, w.live.GetResourceVersion())
			}
			res.Object, err = w.send(ctx, false)
		}
	default:
		res.Object, err = w.send(ctx, false)
		if err == nil && w.live != nil && res.Object.GetResourceVersion() == w.live.GetResourceVersion() {
			res = Result{Change: ChangeNone, Skipped: true, Object: res.Object, Live: w.live}
		}
	}
	return res, err
}

// remember keeps obj, what a write of this target left on the server, so that the next
// server-side apply of it needs no read (see decide); recall returns it, forget drops it.
// Only the objects this target wrote are kept, one copy each.
func (t *ClusterTarget) remember(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.written == nil {
		t.written = map[writtenKey]*unstructured.Unstructured{}
	}
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	t.written[writtenKey{gvr, obj.GetNamespace(), obj.GetName()}] = c
}

func (t *ClusterTarget) recall(gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o := t.written[writtenKey{gvr, namespace, name}]; o != nil {
		return o.DeepCopy()
	}
	return nil
}

func (t *ClusterTarget) forget(gvr schema.GroupVersionResource, namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.written, writtenKey{gvr, namespace, name})
}

// writtenKey names an object a target wrote.
type writtenKey struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// prepareAdoption readies the adoption of the live object (checkOwnership found it
// unmarked and the target adopts): the managedFields patch that moves the previous
// managers' fields to the write's field manager, and, for a write of the whole object, the
// operator label when the body carries no topolayer mark. A status write adopts only when
// there are status fields to move.
func (w *writer) prepareAdoption() error {
	patch, err := moveFieldsPatch(w.live, w.t.opts.Adopt.FieldManagers, w.writeFieldManager(), w.subresource())
	if err != nil {
		return fmt.Errorf("adopt: move the field ownership of %v: %w", w.t.opts.Adopt.FieldManagers, err)
	}
	if w.m.Metadata.Action.IsStatus() && patch == nil {
		return nil
	}
	w.adopt, w.moveFields = true, patch
	if !w.m.Metadata.Action.IsStatus() && w.t.opts.Operator != "" && sourceOf(w.desire) == nil {
		labels := w.desire.GetLabels()
		if labels[namespaces.LabelOperator] == "" {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[namespaces.LabelOperator] = w.t.opts.Operator
			w.desire.SetLabels(labels)
		}
	}
	return nil
}

// keepOperatorLabel keeps on desire, a whole-object write, the operator label that an
// adoption put on live when the body does not carry it (a topology that does not annotate):
// dropping it from the write would remove the mark, and the next run would adopt the object
// again.
func (w *writer) keepOperatorLabel(desire, live *unstructured.Unstructured) {
	op := w.t.opts.Operator
	if op == "" || w.m.Metadata.Action.IsStatus() || live.GetLabels()[namespaces.LabelOperator] != op {
		return
	}
	labels := desire.GetLabels()
	if _, ok := labels[namespaces.LabelOperator]; ok {
		return
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[namespaces.LabelOperator] = op
	desire.SetLabels(labels)
}

// writeFieldManager is the field manager of the write: applyFieldManager for a server-side
// apply, the target's otherwise.
func (w *writer) writeFieldManager() string {
	if m, ok := w.appliedBy(); ok {
		return m
	}
	return w.t.opts.FieldManager
}

// moveFieldsPatch returns the JSON patch of live's managedFields that moves the fields the
// previous managers own on subresource to manager (csaupgrade.UpgradeManagedFieldsPatch),
// nil when none of them owns any. csaupgrade moves the entries of Update operations (a
// client-side apply); a previous manager's server-side apply entries are handed to it as
// such, so that they move the same way. The patch also sets the resourceVersion read: it
// fails with a conflict when the object changed since.
func moveFieldsPatch(live *unstructured.Unstructured, previous []string, manager, subresource string) ([]byte, error) {
	prev := sets.New(previous...)
	prev.Delete(manager)
	if prev.Len() == 0 {
		return nil, nil
	}
	c := live.DeepCopy()
	entries := c.GetManagedFields()
	for i := range entries {
		if prev.Has(entries[i].Manager) && entries[i].Subresource == subresource {
			entries[i].Operation = metav1.ManagedFieldsOperationUpdate
		}
	}
	c.SetManagedFields(entries)
	return csaupgrade.UpgradeManagedFieldsPatch(c, prev, manager, csaupgrade.Subresource(subresource))
}

// sendMoveFields sends the managedFields patch of an adoption, and keeps the patched object
// as the live one (its resourceVersion is the write's).
func (w *writer) sendMoveFields(ctx context.Context) error {
	if w.moveFields == nil {
		return nil
	}
	obj, err := w.ri.Patch(ctx, w.m.Metadata.Name, types.JSONPatchType, w.moveFields, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("adopt: move the managedFields of %v to %s: %w", w.t.opts.Adopt.FieldManagers, w.writeFieldManager(), err)
	}
	w.live = obj
	return nil
}

// sendDry is the dry-run of send; an adopting server-side apply is forced (see check).
func (w *writer) sendDry(ctx context.Context, force bool) (*unstructured.Unstructured, error) {
	if force {
		if manager, ok := w.appliedBy(); ok {
			return w.applyPatch(ctx, manager, true, dryRunOpt(true))
		}
	}
	return w.send(ctx, true)
}

// provenNoOp reports whether the comparison of desire (the object to write, for actions
// that carry one) with live, an existing object, proves that the write changes nothing
// (AppliedNoOp, UpdatedNoOp, PatchedNoOp).
func (w *writer) provenNoOp(desire, live *unstructured.Unstructured) bool {
	switch w.m.Metadata.Action {
	case contract.ActionUpdate, contract.ActionUpdateStatus:
		return UpdatedNoOp(desire, live, w.subresource())
	case contract.ActionPatch, contract.ActionPatchStatus:
		return PatchedNoOp(live, w.m.Metadata.PatchType, w.patch)
	case contract.ActionCreate:
		// A Create of an existing object is a server-side apply with the target's manager.
		return AppliedNoOp(desire, live, w.t.opts.FieldManager, w.subresource())
	case contract.ActionApply, contract.ActionApplyStatus:
		return AppliedNoOp(desire, live, w.applyFieldManager(), w.subresource())
	}
	return false
}

// appliedBy returns the field manager of a write that is a server-side apply of the body:
// Apply and ApplyStatus, and Create of an existing object.
func (w *writer) appliedBy() (string, bool) {
	switch w.m.Metadata.Action {
	case contract.ActionApply, contract.ActionApplyStatus:
		return w.applyFieldManager(), true
	case contract.ActionCreate:
		return w.t.opts.FieldManager, w.live != nil
	}
	return "", false
}

func (w *writer) subresource() string {
	if w.m.Metadata.Action.IsStatus() {
		return "status"
	}
	return ""
}

// send makes the write request of the mutation's action; for Create of an existing object,
// a server-side apply of the body.
func (w *writer) send(ctx context.Context, dry bool) (*unstructured.Unstructured, error) {
	m := w.m.Metadata
	dryRun := dryRunOpt(dry)
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
		fm := w.opts.FieldManager
		if fm == "" {
			fm = m.FieldManager
		}
		if fm == "" {
			fm = fieldManager
		}
		patch := w.patch
		if !dry && w.asked && w.t.opts.Admission != nil && m.Action == contract.ActionPatch && w.live != nil {
			// The patch was judged on what it makes of the live object read: it is written to
			// that object only (a Conflict, or a failed test, when it changed since).
			if patch, err = preconditioned(m.PatchType, patch, w.live.GetResourceVersion()); err != nil {
				return nil, err
			}
		}
		return w.ri.Patch(ctx, m.Name, pt, patch, metav1.PatchOptions{DryRun: dryRun, FieldManager: fm}, w.subresources()...)
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
	obj := w.desire
	if w.remembered {
		// The live object was not read: the apply holds only if the object is still the
		// one this target's last write left.
		obj = obj.DeepCopy()
		obj.SetResourceVersion(w.live.GetResourceVersion())
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return w.ri.Patch(ctx, w.m.Metadata.Name, types.ApplyYAMLPatchType, body,
		metav1.PatchOptions{DryRun: dryRun, FieldManager: fieldManager, Force: &force}, w.subresources()...)
}

// sendDelete deletes the live object, by default only if its uid is still the one read.
func (w *writer) sendDelete(ctx context.Context, dry bool) error {
	opts := *w.delete.DeepCopy()
	if opts.Preconditions == nil {
		uid := w.live.GetUID()
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	opts.DryRun = dryRunOpt(dry)
	return w.ri.Delete(ctx, w.m.Metadata.Name, opts)
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

// setOwner adds owner to the ownerReferences of obj, or replaces the reference to the same
// object.
func setOwner(obj *unstructured.Unstructured, owner *metav1.OwnerReference) {
	refs := obj.GetOwnerReferences()
	for i, r := range refs {
		if r.UID == owner.UID || (r.APIVersion == owner.APIVersion && r.Kind == owner.Kind && r.Name == owner.Name) {
			refs[i] = *owner
			obj.SetOwnerReferences(refs)
			return
		}
	}
	obj.SetOwnerReferences(append(refs, *owner))
}

// isNamespace reports whether id is a core Namespace.
func isNamespace(id contract.Identity) bool { return id.Group == "" && id.Resource == "namespaces" }
