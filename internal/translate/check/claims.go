package check

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/namespaces"
)

// claims returns why the storage obj claims of the management cluster at target is not
// bounded by max bytes (policy.Containment.MaxClaim): a PersistentVolumeClaim, or a
// StatefulSet's volume claim templates (its controller makes one claim of each per
// replica, and replicas are bounded). Each must request its storage, neither its request
// nor its limit may exceed max, and a StatefulSet's templates together, what one replica
// claims, may not either. "" when it is bounded, when max is 0 (no bound), or
// for a shadow copy at target, which nothing provisions. The generic ephemeral volume, a
// pod's own claim, is not a volume source known safe there (volumeSources).
func claims(obj *unstructured.Unstructured, target contract.Identity, max int64) string {
	if _, shadow := namespaces.IsShadowGroup(target.Group); shadow || max <= 0 {
		return ""
	}
	bound := resource.NewQuantity(max, resource.BinarySI)
	switch {
	case target.Group == "" && target.Resource == "persistentvolumeclaims":
		spec, _ := mappingAt(obj.Object, "spec")
		_, why := claimStorage("spec", spec, bound)
		return why
	case target.Group == "apps" && target.Resource == "statefulsets":
		// Each replica claims every template: together they are what one replica asks.
		templates := listAt(obj.Object, "spec", "volumeClaimTemplates")
		var sum resource.Quantity
		for i, t := range templates {
			m, _ := t.(map[string]any)
			spec, _ := m["spec"].(map[string]any)
			request, why := claimStorage(fmt.Sprintf("spec.volumeClaimTemplates[%d].spec", i), spec, bound)
			if why != "" {
				return why
			}
			sum.Add(request)
		}
		if sum.Cmp(*bound) > 0 {
			return fmt.Sprintf("spec.volumeClaimTemplates: the claims of one replica request %s together, over the management cluster's bound of %s (policy.operators[].management.maxClaim)", sum.String(), bound.String())
		}
	}
	return ""
}

// claimStorage returns the storage the claim spec at path requests, and why it is not kept
// within bound ("" when it is).
func claimStorage(path string, spec map[string]any, bound *resource.Quantity) (resource.Quantity, string) {
	var request resource.Quantity
	for _, list := range []string{"requests", "limits"} {
		at := fmt.Sprintf("%s.resources.%s.storage", path, list)
		raw, found, _ := unstructured.NestedFieldNoCopy(spec, "resources", list, string(corev1.ResourceStorage))
		if !found || raw == nil {
			if list == "requests" {
				return request, fmt.Sprintf("%s: unset: a claim on the shared management cluster requests a bounded size", at)
			}
			continue
		}
		q, text, err := podspec.QuantityOf(raw)
		if err != nil || q.Sign() <= 0 {
			return request, fmt.Sprintf("%s: %q is not a positive quantity", at, text)
		}
		if q.Cmp(*bound) > 0 {
			return request, fmt.Sprintf("%s: %s is over the management cluster's bound of %s for one claim (policy.operators[].management.maxClaim)", at, q.String(), bound.String())
		}
		if list == "requests" {
			request = q
		}
	}
	return request, ""
}
