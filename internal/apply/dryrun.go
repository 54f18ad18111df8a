package apply

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
)

func dryRunOpt(dry bool) []string {
	if dry {
		return []string{metav1.DryRunAll}
	}
	return nil
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
	case ChangeFold:
		would, err := w.sendFold(ctx, true)
		if err != nil {
			return Result{Live: w.live}, err
		}
		return Result{Change: ChangeFold, Object: would, Live: w.live}, nil
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

// sendDry is the dry-run of send; an adopting server-side apply is forced (see check).
func (w *writer) sendDry(ctx context.Context, force bool) (*unstructured.Unstructured, error) {
	if force {
		if manager, ok := w.appliedBy(); ok {
			return w.applyPatch(ctx, manager, true, dryRunOpt(true))
		}
	}
	return w.send(ctx, true)
}
