package apply

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// Admission judges the object a patch entry of a plan makes on its target, as the server's
// dry-run of the patch returns it, obj (the patch applied to live, the live object, whatever
// its spelling), before anything of the plan is written. It is decided by whoever composes the
// targets (the topology: the engine's allow-list and policy, translate.Engine.AdmitPatched);
// apply asks it and derives no policy of its own. A non-nil error refuses the entry, and the
// plan fails validation with nothing written.
type Admission interface {
	Admit(e plans.Entry, live, obj *unstructured.Unstructured) error
}

// AdmissionFunc lets a function be an Admission.
type AdmissionFunc func(e plans.Entry, live, obj *unstructured.Unstructured) error

// Admit implements Admission.
func (f AdmissionFunc) Admit(e plans.Entry, live, obj *unstructured.Unstructured) error {
	return f(e, live, obj)
}

var _ Admission = AdmissionFunc(nil)

// admitting is a Target whose patches are judged by an Admission (a ClusterTarget with
// Options.Admission).
type admitting interface {
	admission() Admission
}

func (t *ClusterTarget) admission() Admission { return t.opts.Admission }

// admissionFor returns the Admission that judges entry e on target, nil when none does: only
// patches of the object (not of its status) are judged, on a target that has one.
func admissionFor(target Target, e plans.Entry) Admission {
	a, ok := target.(admitting)
	if !ok || e.Mutation == nil || e.Mutation.Metadata.Action != contract.ActionPatch {
		return nil
	}
	return a.admission()
}

// preconditioned returns a patch (the JSON form of one of patchType) that the server applies
// only to the object at resourceVersion rv, the one its judgment read: a merge or
// strategic-merge patch sets metadata.resourceVersion (a precondition: the server answers
// Conflict when the object changed), a JSON patch first tests /metadata/resourceVersion. A
// patch that names a resourceVersion of its own keeps it.
func preconditioned(patchType string, patch []byte, rv string) ([]byte, error) {
	if rv == "" {
		return patch, nil
	}
	switch patchType {
	case contract.PatchTypeJSON:
		var ops []json.RawMessage
		if err := json.Unmarshal(patch, &ops); err != nil {
			return nil, fmt.Errorf("decode the JSON patch: %w", err)
		}
		test, err := json.Marshal(map[string]string{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
		if err != nil {
			return nil, err
		}
		return json.Marshal(append([]json.RawMessage{test}, ops...))
	case contract.PatchTypeMerge, contract.PatchTypeStrategicMerge:
		var m map[string]any
		if err := json.Unmarshal(patch, &m); err != nil {
			return nil, fmt.Errorf("decode the patch: %w", err)
		}
		meta, _ := m["metadata"].(map[string]any)
		if meta == nil {
			if _, set := m["metadata"]; set {
				return patch, nil // metadata: null, left to the server to refuse
			}
			meta = map[string]any{}
			m["metadata"] = meta
		}
		if _, own := meta["resourceVersion"]; own {
			return patch, nil
		}
		meta["resourceVersion"] = rv
		return json.Marshal(m)
	}
	return patch, nil
}
