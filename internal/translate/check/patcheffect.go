package check

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// Refusal is a policy check's refusal of the object a write makes: the rule that refuses it
// and why, naming the entry, the object and the field.
type Refusal struct {
	// Rule is the refusing rule (RuleManagementFields, RuleReservedLabels, RulePodSecurity, ...).
	Rule string
	// Reason names the entry's standalone identity, the field and the problem.
	Reason string
}

// Error prints the refusal as "rule: reason".
func (r *Refusal) Error() string { return r.Rule + ": " + r.Reason }

// PatchObject returns obj with a patch (body, of contract patch type patchType: JSON, merge or
// strategic merge) applied, as the API server applies it, whatever its spelling: a JSON
// patch's pointers with their escapes (~1 is '/'), a merge patch (RFC 7386) with its JSON
// string escapes (\/ is '/'), a strategic merge with its directives ($patch, $retainKeys, ...)
// and the patch strategies of the built-in kind's Go type (client-go's scheme). A kind the
// scheme does not know is merged as a merge patch. A body that is not JSON is read as YAML.
// obj is not modified.
func PatchObject(obj *unstructured.Unstructured, body []byte, patchType string) (*unstructured.Unstructured, error) {
	js := body
	if !json.Valid(body) {
		var err error
		if js, err = sigsyaml.YAMLToJSON(body); err != nil {
			return nil, fmt.Errorf("decode the patch: %w", err)
		}
	}
	doc, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch patchType {
	case contract.PatchTypeJSON:
		p, err := jsonpatch.DecodePatch(js)
		if err != nil {
			return nil, fmt.Errorf("decode the JSON patch: %w", err)
		}
		if patched, err = p.Apply(doc); err != nil {
			return nil, fmt.Errorf("apply the JSON patch: %w", err)
		}
	case contract.PatchTypeMerge:
		if patched, err = jsonpatch.MergePatch(doc, js); err != nil {
			return nil, fmt.Errorf("apply the merge patch: %w", err)
		}
	case contract.PatchTypeStrategicMerge:
		typed, err := scheme.Scheme.New(obj.GroupVersionKind())
		if runtime.IsNotRegisteredError(err) {
			if patched, err = jsonpatch.MergePatch(doc, js); err != nil {
				return nil, fmt.Errorf("apply the strategic-merge patch of a kind without a schema, as a merge patch: %w", err)
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if patched, err = strategicpatch.StrategicMergePatch(doc, js, typed); err != nil {
			return nil, fmt.Errorf("apply the strategic-merge patch: %w", err)
		}
	default:
		return nil, fmt.Errorf("patch type %q cannot be applied here", patchType)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(patched); err != nil {
		return nil, fmt.Errorf("the patched object: %w", err)
	}
	return out, nil
}

// patchBases returns, for each applied patch of the plan, the work that writes its target
// object just before it: a whole object (Apply, Create, Update) or an earlier patch of it,
// in plan order (which is the write order of one object: apply.ApplyPlan writes the writes of
// whole objects and patches in plan order, status writes and deletions after them). A patch
// without one patches the live object.
func patchBases(works []Write) map[Write]Write {
	var out map[Write]Write
	last := map[targetKey]Write{}
	for _, w := range works {
		if w.Entry().Disposition != routing.Apply || w.Entry().Target.Name == "" {
			continue
		}
		key := targetKey{w.Entry().Target.Cluster, w.Entry().Target.Identity.Key()}
		switch w.Mutation().Metadata.Action {
		case contract.ActionApply, contract.ActionCreate, contract.ActionUpdate:
			last[key] = w
		case contract.ActionPatch:
			if base := last[key]; base != nil {
				if out == nil {
					out = map[Write]Write{}
				}
				out[w] = base
			}
			last[key] = w
		}
	}
	return out
}

// checkPatchEffects judges every applied patch whose target object the plan writes earlier
// (patchBases) by what it makes: the patch is applied to that object as the API server would
// apply it (PatchObject), and the checks that read a whole object run on the result: the
// management cluster's allow-list (fields, reserved labels, a projected token), Pod Security,
// and the account a service-account-token Secret names. A patch of an object the plan does
// not write is judged at apply time, on what the server's dry-run of it returns
// (AdmitPatched). written are the standalone objects the plan writes (Tokens').
func (e *Checker) checkPatchEffects(works []Write, written map[contract.Key]bool) {
	bases := patchBases(works)
	if len(bases) == 0 {
		return
	}
	made := map[Write]*unstructured.Unstructured{}
	for _, w := range works {
		base, ok := bases[w]
		if !ok {
			continue
		}
		from := made[base]
		if from == nil {
			from = base.Entry().Object
		}
		if from == nil || base.Entry().Disposition != routing.Apply || w.Entry().Disposition != routing.Apply {
			continue // the earlier entry is refused: so is the plan
		}
		src, action := w.Entry().Source, w.Mutation().Metadata.Action
		by := fmt.Sprintf("the %s applied to the object that %s %s writes earlier in the plan", action, base.Mutation().Metadata.Action, base.Entry().Source)
		obj, err := PatchObject(from, w.Mutation().Body, w.Mutation().Metadata.PatchType)
		if err != nil {
			w.Reject(plans.RuleBody, fmt.Sprintf("%s: %s cannot be judged: %v", src, by, err))
			continue
		}
		made[w] = obj
		if r := e.judgeWhole(*w.Entry(), obj); r != nil {
			w.Reject(r.Rule, fmt.Sprintf("%s (%s)", r.Reason, by))
			continue
		}
		if src.Group == "" && src.Resource == "secrets" && patchTouchesToken(w.Mutation()) {
			if why := e.tokenAccountLanded(*w.Entry(), obj, written); why != "" {
				w.Reject(policy.RuleServiceAccountToken, fmt.Sprintf("%s: metadata.annotations[%s]: %s (%s)", src, AnnotationServiceAccountName, why, by))
			}
		}
	}
}

// AdmitPatched judges obj, the object a patch entry of a plan makes on its target (what the
// API server's dry-run of the patch returns: the patch applied to live, the live object,
// whatever its spelling), by the checks the engine runs on a whole object written there: on
// the management cluster, its allow-list's fields and reserved labels and Pod Security. What
// the server assigned to live and the patch left as it was (a Service's cluster IPs, the
// volume a bound claim names) is the server's, not the operator's, and not judged. It returns
// nil when obj may land, a *Refusal otherwise. Other entries, and status patches (which
// change no field those checks read), are not judged here: the engine judged them. It is the
// admission the topology gives the management target (apply.Options.Admission).
func (e *Checker) AdmitPatched(entry plans.Entry, live, obj *unstructured.Unstructured) error {
	if entry.Action != contract.ActionPatch || entry.Disposition != routing.Apply {
		return nil
	}
	if obj == nil {
		return &Refusal{Rule: plans.RuleBody, Reason: fmt.Sprintf("%s: the server returned no object for the patch: it cannot be judged", entry.Source)}
	}
	if r := e.judgeWhole(entry, withoutAssigned(entry.Target.Identity, live, obj)); r != nil {
		return r
	}
	return nil
}

// assignedFields are the fields the API server or its controllers set on an object of the
// allow-list's kinds that its checks read: a Service's cluster IPs, the volume a claim is
// bound to.
var assignedFields = map[string][][]string{
	"services":               {{"spec", "clusterIP"}, {"spec", "clusterIPs"}},
	"persistentvolumeclaims": {{"spec", "volumeName"}},
}

// withoutAssigned returns obj without the fields (assignedFields) that hold on obj what they
// hold on live: the server assigned them, the patch did not set them. obj is not modified.
func withoutAssigned(target contract.Identity, live, obj *unstructured.Unstructured) *unstructured.Unstructured {
	fields := assignedFields[target.Resource]
	if live == nil || target.Group != "" || len(fields) == 0 {
		return obj
	}
	out := obj
	for _, f := range fields {
		was, found, _ := unstructured.NestedFieldNoCopy(live.Object, f...)
		is, _, _ := unstructured.NestedFieldNoCopy(obj.Object, f...)
		if found && equality.Semantic.DeepEqual(was, is) {
			if out == obj {
				out = obj.DeepCopy()
			}
			unstructured.RemoveNestedField(out.Object, f...)
		}
	}
	return out
}

// judgeWhole runs on obj, the whole object an entry's patch makes on its target, the checks
// the engine runs on a whole object written there; nil when it may land.
func (e *Checker) judgeWhole(entry plans.Entry, obj *unstructured.Unstructured) *Refusal {
	if entry.Target.Cluster != routing.ClusterManagement {
		return nil
	}
	src := entry.Source
	if e.Containment != nil {
		o := routing.Object{Class: entry.Class, Identity: src, Labels: obj.GetLabels()}
		if rule, why := e.managementObject(entry.Target.Identity, obj, o); why != "" {
			return &Refusal{Rule: rule, Reason: fmt.Sprintf("%s: %s", src, why)}
		}
	}
	if e.Policy != nil {
		if why := podSecurityOf(obj); why != "" {
			return &Refusal{Rule: policy.RulePodSecurity, Reason: fmt.Sprintf("%s: %s", src, why)}
		}
	}
	return nil
}

// errNotToken says a patched Secret is no service-account-token Secret.
var errNotToken = errors.New("not a service-account-token Secret")

// tokenAccountLanded returns why obj, a Secret as a patch makes it on the entry's target,
// may not name the account it names: "" when it is no service-account-token Secret, or names
// the landing place, beside it, of a service account of its standalone namespace that the
// operator writes in this plan (written) or declares. A patch is not rewritten: the name it
// sets is the name the token controller reads on the target.
func (e *Checker) tokenAccountLanded(entry plans.Entry, obj *unstructured.Unstructured, written map[contract.Key]bool) string {
	name, err := tokenAccount(obj)
	switch {
	case errors.Is(err, errNotToken):
		return ""
	case name == "":
		return fmt.Sprintf("a Secret of type %s must name its service account", SecretTypeServiceAccountToken)
	}
	cluster, at := entry.Target.Cluster, entry.Target.Identity.Namespace
	sa, err := e.Names.ToSource(cluster, ServiceAccountID(at, name), nil)
	if err == nil && sa.Namespace == entry.Source.Namespace &&
		(written[sa.Key()] || e.declaresAccount(sa)) {
		if back, err := e.Names.ToTarget(cluster, sa); err == nil && back.Namespace == at && back.Name == name {
			return ""
		}
	}
	return fmt.Sprintf("names service account %s/%s on the %s cluster, which is not where one of the operator's own accounts (written by this plan or declared) lands: its token would be handed to the operator", at, name, cluster)
}

// tokenAccount returns the account a Secret of type kubernetes.io/service-account-token
// names, or errNotToken.
func tokenAccount(obj *unstructured.Unstructured) (string, error) {
	if obj.GetKind() != "Secret" || obj.GetAPIVersion() != "v1" {
		return "", errNotToken
	}
	if t, _, _ := unstructured.NestedString(obj.Object, "type"); t != SecretTypeServiceAccountToken {
		return "", errNotToken
	}
	return obj.GetAnnotations()[AnnotationServiceAccountName], nil
}
