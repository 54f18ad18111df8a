package apply

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
)

// ConflictError says that an object already on a target is not the planned object's to
// write: it records another source identity, another operator, or (on a target that requires
// ownership) nothing of topolayer at all. Nothing was written.
type ConflictError struct {
	// Target is the target's name.
	Target string
	// Identity is the mutation's target identity.
	Identity contract.Identity
	// Reason says what differs.
	Reason string
	// LiveSource is the live object's source identity annotations; LiveOperator its operator
	// label.
	LiveSource   map[string]string
	LiveOperator string
	// Adoptable is true when the object carries no topolayer mark and the target does not
	// adopt: with adoption (Options.Adopt) the write would take it over. The error then ends
	// with AdoptHint.
	Adoptable bool
}

// Error implements error: what conflicts, where, and why the write is refused.
func (e *ConflictError) Error() string {
	msg := fmt.Sprintf("conflict on %s: %s already exists and %s; refusing to write it", e.Target, e.Identity, e.Reason)
	if e.Adoptable {
		msg += "; " + AdoptHint
	}
	return msg
}

// sourceKeys are the annotations that record a standalone identity.
var sourceKeys = []string{
	namespaces.AnnotationStandaloneGroup,
	namespaces.AnnotationStandaloneResource,
	namespaces.AnnotationStandaloneNamespace,
	namespaces.AnnotationStandaloneName,
	namespaces.AnnotationStandaloneGenerateName,
}

// sourceOf returns the source identity annotations of obj (nil when it has none).
func sourceOf(obj *unstructured.Unstructured) map[string]string {
	if obj == nil {
		return nil
	}
	var out map[string]string
	ann := obj.GetAnnotations()
	for _, k := range sourceKeys {
		if v, ok := ann[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// AdoptHint says how to take over an object without topolayer's marks; refusals of such
// objects end with it.
const AdoptHint = "to adopt it, set operators[].adopt.fieldManagers in the configuration (topolayer run) or pass --adopt-from MANAGER (apply, plan), naming its previous field managers"

// checkOwnership decides whether the mutation m (whose object is desire, nil for patches
// and deletes) may write over live. operator is the writing operator ("" means the label
// of desire); requireOwnership makes an object without any topolayer mark someone else's,
// except for status writes. With adopt, such an unmarked object is adopted instead when m
// writes it whole or its status with a body (adopted is true); a patch or delete of it cannot add the
// marks and stays a conflict on a target that requires ownership.
func checkOwnership(target string, m contract.Mutation, desire, live *unstructured.Unstructured, operator string, requireOwnership, adopt bool) (adopted bool, err error) {
	liveSrc := sourceOf(live)
	liveOp := live.GetLabels()[namespaces.LabelOperator]
	conflict := func(reason string) *ConflictError {
		return &ConflictError{Target: target, Identity: m.Identity(), Reason: reason, LiveSource: liveSrc, LiveOperator: liveOp}
	}
	if desire != nil && operator == "" {
		operator = desire.GetLabels()[namespaces.LabelOperator]
	}
	if liveOp != "" && operator != "" && liveOp != operator {
		return false, conflict(fmt.Sprintf("belongs to operator %q (label %s)", liveOp, namespaces.LabelOperator))
	}
	if want := sourceOf(desire); want != nil && liveSrc != nil && !maps.Equal(want, liveSrc) {
		return false, conflict(fmt.Sprintf("records another source identity (%s)", describeSource(liveSrc)))
	}
	unmarked := liveSrc == nil && liveOp == ""
	action := m.Metadata.Action
	if unmarked && adopt && action.CarriesObject() {
		return true, nil
	}
	if requireOwnership && unmarked && !action.IsStatus() {
		if adopt {
			return false, conflict(fmt.Sprintf("was not written by topolayer (no standalone identity annotations, no operator label), and a %s cannot adopt it (adoption takes over objects written whole: create, update, apply)", action))
		}
		err := conflict("was not written by topolayer (no standalone identity annotations, no operator label)")
		err.Adoptable = true
		return false, err
	}
	return false, nil
}

// describeSource formats source identity annotations like an identity.
func describeSource(a map[string]string) string {
	id := contract.Identity{
		Group:        a[namespaces.AnnotationStandaloneGroup],
		Resource:     a[namespaces.AnnotationStandaloneResource],
		Namespace:    a[namespaces.AnnotationStandaloneNamespace],
		Name:         a[namespaces.AnnotationStandaloneName],
		GenerateName: a[namespaces.AnnotationStandaloneGenerateName],
	}
	return id.String()
}
