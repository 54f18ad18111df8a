package check

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/internal/translate/podsecurity"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/policy"

	psaapi "k8s.io/pod-security-admission/api"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// checkPodSecurity rejects a management-side pod or pod template that does not meet the
// "restricted" level on its final object, naming the fields the evaluator forbids. It also
// forbids spec.nodeName, which Pod Security allows but which bypasses the scheduler and the
// control-plane placement of a shared management cluster.
func (e *Checker) checkPodSecurity(w Write) {
	if e.Policy == nil || w.Entry().Disposition != routing.Apply || w.Entry().Target.Cluster != routing.ClusterManagement {
		return
	}
	action := w.Mutation().Metadata.Action
	if action == contract.ActionDelete || action.IsStatus() {
		return
	}
	gk := e.groupKindOf(w.Entry().Target.Identity, w.Entry().Object)
	if !podspec.RunsPods(w.Entry().Target.Identity.Group, gk) {
		return
	}
	src := w.Entry().Source
	if action == contract.ActionPatch {
		return // judged on what it makes of the object it patches (checkPatchEffects, AdmitPatched)
	}
	if !action.CarriesObject() || w.Entry().Object == nil {
		what := "a pod-bearing object"
		if _, known := podspec.Known(gk); !known {
			what = "a custom resource, which may hold pod specs,"
		}
		w.Reject(policy.RulePodSecurity, fmt.Sprintf("%s: a %s of %s on the management cluster cannot be checked against Pod Security %q; write the whole object (Apply)", src, action, what, psaapi.LevelRestricted))
		return
	}
	sites, err := podspec.Find(gk, w.Entry().Object.Object)
	if err != nil {
		w.Reject(policy.RulePodSecurity, fmt.Sprintf("%s: %v: its pod specs cannot be checked against Pod Security %q", src, err, psaapi.LevelRestricted))
		return
	}
	var reasons []string
	for _, site := range sites {
		if reason := podsecurity.Reason(w.Entry().Object.Object, site); reason != "" {
			reasons = append(reasons, reason)
		}
	}
	if len(reasons) > 0 {
		w.Reject(policy.RulePodSecurity, fmt.Sprintf("%s: %s", src, strings.Join(reasons, "; ")))
	}
}

// podSecurityOf returns why obj, a whole object as it will be on the management cluster, does
// not meet the "restricted" level; "" when it does or holds no pod. Its pod specs are found
// as the check finds them (podspec.Find); one that cannot be searched is not restricted.
func podSecurityOf(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	sites, err := podspec.Find(gvk.GroupKind(), obj.Object)
	if err != nil {
		return fmt.Sprintf("%v: its pod specs cannot be checked against Pod Security %q", err, psaapi.LevelRestricted)
	}
	var reasons []string
	for _, site := range sites {
		if reason := podsecurity.Reason(obj.Object, site); reason != "" {
			reasons = append(reasons, reason)
		}
	}
	return strings.Join(reasons, "; ")
}
