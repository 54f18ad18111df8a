package check

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/namespaces"
)

// scratch returns why the pods of obj, as it will be on the management cluster (sites, its
// pod specs: podspec.SitesOf), may hold more on their node than max bytes of scratch space:
// an emptyDir volume without a sizeLimit (the kubelet bounds nothing then), a sizeLimit that
// is not a quantity, or limits that together exceed max. "" when they keep to it, when max is
// 0 (no bound), or for a shadow copy at target. The writable root filesystem and container
// logs are the kubelet's and the read-only-root opinion's to bound.
func scratch(obj *unstructured.Unstructured, sites []podspec.Site, target contract.Identity, max int64) string {
	if _, shadow := namespaces.IsShadowGroup(target.Group); shadow || max <= 0 {
		return "" // nothing runs a shadow copy's pods
	}
	bound := resource.NewQuantity(max, resource.BinarySI)
	for _, site := range sites {
		spec, _ := site.Spec.Get(obj.Object).(map[string]any)
		volumes, _, _ := unstructured.NestedSlice(spec, "volumes")
		var sum resource.Quantity
		for i, v := range volumes {
			m, _ := v.(map[string]any)
			dir, ok := m["emptyDir"]
			if !ok {
				continue
			}
			at := fmt.Sprintf("%s.volumes[%d].emptyDir.sizeLimit", site.Spec, i)
			dm, _ := dir.(map[string]any)
			raw, ok := dm["sizeLimit"]
			if !ok || raw == nil {
				return fmt.Sprintf("%s: unset: a scratch volume on the shared management cluster must be bounded (the hypershift profile sets it: hypershift/bound-scratch)", at)
			}
			text, ok := raw.(string)
			if !ok {
				text = fmt.Sprint(raw) // a bare number of bytes
			}
			q, err := resource.ParseQuantity(text)
			if err != nil || q.Sign() <= 0 {
				return fmt.Sprintf("%s: %q is not a positive quantity", at, text)
			}
			sum.Add(q)
		}
		if sum.Cmp(*bound) > 0 {
			return fmt.Sprintf("%s.volumes: the emptyDir sizeLimits add up to %s, over the management cluster's bound of %s (policy.operators[].management.maxScratch)", site.Spec, sum.String(), bound.String())
		}
	}
	return ""
}
