package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
)

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
	decided    Result                     // what the write does, as prepare found
	asked      bool                       // decided is the server's answer to a dry-run
	adopt      bool                       // the write adopts live (Options.Adopt)
	moveFields []byte                     // the managedFields patch sent before an adopting write; nil for none
	repeat     *unstructured.Unstructured // the Event a Create of an Event folds into (ChangeFold)
	repeats    int                        // how many Events of the plan the fold counts (dropIdleRepeats)
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
		if _, ok := ann[namespaces.AnnotationOwnerHCP]; ok {
			delete(ann, namespaces.AnnotationOwnerHCP)
			if len(ann) == 0 {
				ann = nil
			}
			obj.SetAnnotations(ann)
		}
	}
	if o := w.t.opts; o.HostedControlPlane != nil && w.namespaced &&
		OwnedByHostedControlPlane(WritesWhole(w.m.Metadata.Action), w.m.Metadata.Namespace, w.gvk.Kind, o.Namespace) {
		SetOwner(obj, o.HostedControlPlane)
	}
}

// WritesWhole reports whether a write of action writes the whole object (Create, Update,
// Apply), not a patch or its status.
func WritesWhole(action contract.Action) bool {
	switch action {
	case contract.ActionCreate, contract.ActionUpdate, contract.ActionApply:
		return true
	}
	return false
}

// OwnedByHostedControlPlane reports whether a management target of the HCP namespace
// hcpNamespace (Options.Namespace) makes its HostedControlPlane an owner of an object it
// writes: an object of that namespace (namespace), written whole (WritesWhole), and not an
// Event. The target then adds the reference (Options.HostedControlPlane, SetOwner).
func OwnedByHostedControlPlane(whole bool, namespace, kind, hcpNamespace string) bool {
	return whole && hcpNamespace != "" && namespace == hcpNamespace && kind != "Event"
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
	if live == nil && w.foldsEvents() {
		repeat, err := w.findRepeat(ctx)
		if err != nil {
			return Result{}, err
		}
		if repeat != nil {
			w.repeat = repeat
			return Result{Change: ChangeFold, Live: repeat}, nil
		}
	}
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

// provenNoOp reports whether the comparison of desire (the object to write, for actions
// that carry one) with live, an existing object, proves that the write changes nothing
// (AppliedNoOp, UpdatedNoOp, PatchedNoOp).
func (w *writer) provenNoOp(desire, live *unstructured.Unstructured) bool {
	switch w.m.Metadata.Action {
	case contract.ActionUpdate, contract.ActionUpdateStatus:
		return UpdatedNoOp(desire, live, w.subresource()) || w.t.repeatsUpdate(w.gvr, w.subresource(), desire, live)
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

// stripServerFields removes what the server sets (contract.StripServerFields) and the
// deletion fields a body from another cluster may carry: a write never asks for them.
func stripServerFields(obj *unstructured.Unstructured) {
	contract.StripServerFields(obj.Object)
	for _, f := range []string{"deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
}

// SetOwner adds owner to the ownerReferences of obj, or replaces the reference to the same
// object.
func SetOwner(obj *unstructured.Unstructured, owner *metav1.OwnerReference) {
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
