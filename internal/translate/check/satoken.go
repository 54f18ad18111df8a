package check

import (
	"fmt"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/yamlnode"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Names of the service-account-token Secret type and its annotation.
const (
	SecretTypeServiceAccountToken = "kubernetes.io/service-account-token"
	AnnotationServiceAccountName  = "kubernetes.io/service-account.name"
)

// ServiceAccountTokenOf returns the account name of a Secret of type
// kubernetes.io/service-account-token (obj in any form), and whether obj is one.
func ServiceAccountTokenOf(obj *yaml.RNode) (string, bool) {
	if obj == nil || obj.GetKind() != "Secret" || obj.GetApiVersion() != "v1" {
		return "", false
	}
	if t, _ := yamlnode.StringAt(obj, "type"); t != SecretTypeServiceAccountToken {
		return "", false
	}
	return obj.GetAnnotations()[AnnotationServiceAccountName], true
}

// Writes reports whether the plan writes w's object: applies or absorbs it, not deletes it.
func Writes(w Write) bool {
	d := w.Entry().Disposition
	return (d == routing.Apply || d == routing.Absorbed) && w.Mutation().Metadata.Action != contract.ActionDelete
}

// MayCarryToken reports whether Tokens reads w, a Secret: a Secret of type
// kubernetes.io/service-account-token, or a change other than a delete whose body names the
// token's annotation.
func MayCarryToken(w Write) bool {
	action := w.Mutation().Metadata.Action
	switch {
	case !action.CarriesObject():
		return action != contract.ActionDelete && patchTouchesToken(w.Mutation())
	case w.Source() == nil:
		return true
	}
	o := w.Source().Object
	return o["kind"] == "Secret" && o["apiVersion"] == "v1" && o["type"] == SecretTypeServiceAccountToken
}

// patchTouchesToken reports whether a patch of a Secret may make it a token Secret or change
// the account it names: it sets or removes the type or the annotation, or a field holding
// them, as the API server decodes its paths (patchPaths). One that does not parse may too.
func patchTouchesToken(m *contract.Mutation) bool {
	paths, err := patchPaths(m.Body, m.Metadata.PatchType)
	if err != nil {
		return true
	}
	return touches(paths, "type") || touches(paths, "metadata", "annotations", AnnotationServiceAccountName)
}

// ServiceAccountID returns the identity of the service account name in namespace.
func ServiceAccountID(namespace, name string) contract.Identity {
	return contract.Identity{Version: "v1", Resource: "serviceaccounts", Namespace: namespace, Name: name}
}

// WaitsForTokens returns, for the writes of a plan, whether Tokens reads a write as Object
// may change it: its disposition (a service account it writes, a patch and the object the
// patch is judged against, what is not applied) or its object (a Secret). Object must run on
// those after Tokens; the others may be finished, and their trees let go, as soon as they are
// rewritten.
func WaitsForTokens(works []Write) func(Write) bool {
	patched := map[targetKey]bool{}
	for _, w := range works {
		if !w.Mutation().Metadata.Action.CarriesObject() {
			patched[targetKey{w.Entry().Target.Cluster, w.Entry().Target.Identity.Key()}] = true
		}
	}
	return func(w Write) bool {
		e := w.Entry()
		switch {
		case e.Disposition != routing.Apply || !w.Mutation().Metadata.Action.CarriesObject():
			return true
		case e.Source.Group == "" && (e.Source.Resource == "serviceaccounts" || e.Source.Resource == "secrets"):
			return true
		}
		return patched[targetKey{e.Target.Cluster, e.Target.Identity.Key()}]
	}
}

// Tokens renames and checks the account of every service-account-token Secret of the plan
// (RuleServiceAccountToken): the annotation becomes the name its account lands as on the
// Secret's cluster; the Secrets of accounts that are not the operator's are refused, and so
// are patches that name the annotation of Secrets the plan does not write earlier (those it
// does are judged by checkPatchEffects). It runs once every body is rewritten, before
// Object. written holds the objects the plan writes besides works' (a planner's spilled
// entries); it is added to.
func (e *Checker) Tokens(works []Write, written map[contract.Key]bool) {
	for _, w := range works {
		if Writes(w) {
			written[w.Entry().Source.Key()] = true
		}
	}
	bases := patchBases(works)
	for _, w := range works {
		src := w.Entry().Source
		if w.Entry().Disposition != routing.Apply || src.Group != "" || src.Resource != "secrets" {
			continue
		}
		action := w.Mutation().Metadata.Action
		if !action.CarriesObject() {
			if _, judged := bases[w]; !judged && action != contract.ActionDelete && patchTouchesToken(w.Mutation()) {
				w.Reject(policy.RuleServiceAccountToken, fmt.Sprintf("%s: metadata.annotations[%s]: a %s that sets or removes the Secret's type or that annotation (however the patch spells it) of a Secret this plan does not write earlier cannot be checked for the service account whose token it would receive; write the whole Secret (Apply)",
					src, AnnotationServiceAccountName, action))
			}
			continue // a patch of a Secret the plan writes earlier is judged on what it makes (checkPatchEffects)
		}
		if !MayCarryToken(w) {
			continue // not a token Secret: no tree to build
		}
		name, ok := ServiceAccountTokenOf(w.Tree())
		if !ok || action.IsStatus() {
			continue
		}
		field := "metadata.annotations[" + AnnotationServiceAccountName + "]"
		if name == "" {
			w.Reject(policy.RuleServiceAccountToken, fmt.Sprintf("%s: %s: a Secret of type %s must name its service account", src, field, SecretTypeServiceAccountToken))
			continue
		}
		sa := ServiceAccountID(src.Namespace, name)
		if !written[sa.Key()] && !e.declaresAccount(sa) {
			w.Reject(policy.RuleServiceAccountToken, fmt.Sprintf("%s: %s: names service account %s, which is not the operator's (neither written by this plan nor declared in its output-resources): its token would be handed to the operator",
				src, field, sa))
			continue
		}
		target, err := e.Names.ToTarget(w.Entry().Target.Cluster, sa)
		if err != nil {
			w.Reject(policy.RuleServiceAccountToken, fmt.Sprintf("%s: %s: service account %s: %v", src, field, sa, err))
			continue
		}
		if target.Namespace != w.Entry().Target.Identity.Namespace {
			w.Reject(policy.RuleServiceAccountToken, fmt.Sprintf("%s: %s: service account %s lands in namespace %s, not beside the Secret in %s",
				src, field, sa, target.Namespace, w.Entry().Target.Identity.Namespace))
			continue
		}
		if f := w.Final(); f == nil || target.Name == name || f.GetAnnotations()[AnnotationServiceAccountName] == target.Name {
			continue // nothing to rename, or the annotation-references step did (and recorded it)
		}
		if err := w.Edit().PipeE(yaml.SetAnnotation(AnnotationServiceAccountName, target.Name)); err != nil {
			w.Reject(plans.RuleBody, fmt.Sprintf("%s: %s: %v", src, field, err))
			continue
		}
		w.Entry().Mutation.Body, w.Entry().Mutation.Object = nil, nil // written from the final object
		w.Entry().Changes = append(w.Entry().Changes, plans.Change{Path: yamlnode.Pointer([]string{"metadata", "annotations", AnnotationServiceAccountName}),
			From: name, To: target.Name, By: policy.RuleServiceAccountToken, Kind: plans.ChangeReference, Detail: "the operator's own service account, renamed"})
	}
}

// ForeignServiceAccountToken returns why a Secret read from cluster (target identity t, raw as
// read, before mapping back) must not be handed to an operator whose output-resources are
// declared: it is a service-account-token Secret whose account, as the annotation names it on
// the cluster, is not the exact landing place of a service account the operator declares in
// the Secret's standalone namespace src. "" when it may be handed over.
func ForeignServiceAccountToken(names namespaces.Mapper, declared *contract.OutputResources, cluster string, t, src contract.Identity, raw *yaml.RNode) string {
	name, ok := ServiceAccountTokenOf(raw)
	if !ok {
		return ""
	}
	if name == "" {
		return fmt.Sprintf("%s: a %s Secret names no service account", t, SecretTypeServiceAccountToken)
	}
	sa, err := names.ToSource(cluster, ServiceAccountID(t.Namespace, name), nil)
	if err == nil && sa.Namespace == src.Namespace && len(declared.ClassesOf(sa)) > 0 {
		if back, err := names.ToTarget(cluster, sa); err == nil && back.Namespace == t.Namespace && back.Name == name {
			return ""
		}
	}
	return fmt.Sprintf("%s holds a token of service account %s/%s on %s, which is not one the operator declares in its output-resources", t, t.Namespace, name, cluster)
}
