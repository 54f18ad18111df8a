package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/translate"
)

// Admission judges the object a patch entry of a plan makes on its target, as the server's
// dry-run of the patch returns it, obj (the patch applied to live, the live object, whatever
// its spelling), before anything of the plan is written. It is decided by whoever composes the
// targets (the topology: the engine's allow-list and policy, translate.Engine.AdmitPatched);
// apply asks it and derives no policy of its own. A non-nil error refuses the entry, and the
// plan fails validation with nothing written.
type Admission interface {
	Admit(e translate.Entry, live, obj *unstructured.Unstructured) error
}

// AdmissionFunc lets a function be an Admission.
type AdmissionFunc func(e translate.Entry, live, obj *unstructured.Unstructured) error

// Admit implements Admission.
func (f AdmissionFunc) Admit(e translate.Entry, live, obj *unstructured.Unstructured) error {
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
func admissionFor(target Target, e translate.Entry) Admission {
	a, ok := target.(admitting)
	if !ok || e.Mutation == nil || e.Mutation.Metadata.Action != contract.ActionPatch {
		return nil
	}
	return a.admission()
}
