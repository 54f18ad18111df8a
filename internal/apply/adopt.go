package apply

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"

	"github.com/topolayer/topolayer/namespaces"
)

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
