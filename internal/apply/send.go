package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topolayer/topolayer/contract"
)

func (w *writer) subresources() []string {
	if w.m.Metadata.Action.IsStatus() {
		return []string{"status"}
	}
	return nil
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
		if a := w.m.Metadata.Action; (a == contract.ActionUpdate || a == contract.ActionUpdateStatus) && w.desire != nil {
			// What this update sent, or found the object already held.
			w.t.rememberUpdate(w.gvr, w.subresource(), w.desire, res.Object)
		}
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
	case ChangeFold:
		res.Object, err = w.sendFold(ctx, false)
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
