package translate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/translate/podsecurity"

	psaapi "k8s.io/pod-security-admission/api"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// RulePodSecurity rejects pods and pod templates placed on the management cluster that do not
// meet the Kubernetes Pod Security "restricted" level, as they will be written: the management
// cluster's nodes run every tenant's control plane.
const RulePodSecurity = "policy/pod-security"

// PodSecurityMode says how the pods an operator places on the management cluster are brought
// to the Pod Security "restricted" level.
type PodSecurityMode string

const (
	// PodSecurityStrip (the default) runs the profile's stripping transforms (Transform.Strips):
	// what a standalone workload only needs on a standalone node is dropped.
	PodSecurityStrip PodSecurityMode = "strip"
	// PodSecurityReject runs no stripping transform: a pod that would need stripping is
	// refused.
	PodSecurityReject PodSecurityMode = "reject"
)

// checkPodSecurity rejects a management-side pod or pod template that does not meet the
// "restricted" level on its final object, naming the fields the evaluator forbids. It also
// forbids spec.nodeName, which Pod Security allows but which bypasses the scheduler and the
// control-plane placement of a shared management cluster.
func (e Engine) checkPodSecurity(w *work) {
	if e.Policy == nil || w.entry.Disposition != routing.Apply || w.entry.Target.Cluster != routing.ClusterManagement {
		return
	}
	action := w.m.Metadata.Action
	if action == contract.ActionDelete || action.IsStatus() {
		return
	}
	kind, group := "", w.entry.Target.Identity.Group
	if o := w.entry.Object; o != nil {
		kind, group = o.GetKind(), o.GroupVersionKind().Group
	} else if k, ok := podsecurity.KindOfResource(w.entry.Target.Identity.Resource); ok {
		kind = k
	}
	path, ok := podsecurity.TemplatePath(kind)
	if !ok || (group != "" && group != "apps" && group != "batch") || (kind == "Pod") != (group == "") {
		return
	}
	src := w.entry.Source
	if action == contract.ActionPatch {
		return // judged on what it makes of the object it patches (checkPatchEffects, AdmitPatched)
	}
	if !action.CarriesObject() || w.entry.Object == nil {
		w.reject(RulePodSecurity, fmt.Sprintf("%s: a %s of a pod-bearing object on the management cluster cannot be checked against Pod Security %q; write the whole object (Apply)", src, action, psaapi.LevelRestricted))
		return
	}
	if reason := podsecurity.Reason(w.entry.Object.Object, path); reason != "" {
		w.reject(RulePodSecurity, fmt.Sprintf("%s: %s", src, reason))
	}
}

// podSecurityOf returns why obj, a whole object as it will be on the management cluster, does
// not meet the "restricted" level; "" when it does or holds no pod.
func podSecurityOf(obj *unstructured.Unstructured) string {
	kind, group := obj.GetKind(), obj.GroupVersionKind().Group
	path, ok := podsecurity.TemplatePath(kind)
	if !ok || (group != "" && group != "apps" && group != "batch") || (kind == "Pod") != (group == "") {
		return ""
	}
	return podsecurity.Reason(obj.Object, path)
}
