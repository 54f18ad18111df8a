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
// an emptyDir volume without a sizeLimit (the kubelet bounds nothing then), a container whose
// root filesystem is writable in a pod without an ephemeral-storage limit (its writable
// layer is the node's disk, and only that limit makes the kubelet evict the pod that fills
// it), a bound that is not a quantity, or bounds over max. "" when they keep to it, when max
// is 0 (no bound), or for a shadow copy at target. Container logs are the kubelet's to
// rotate.
func scratch(obj *unstructured.Unstructured, sites []podspec.Site, target contract.Identity, max int64) string {
	if _, shadow := namespaces.IsShadowGroup(target.Group); shadow || max <= 0 {
		return "" // nothing runs a shadow copy's pods
	}
	bound := resource.NewQuantity(max, resource.BinarySI)
	for _, site := range sites {
		spec, _ := site.Spec.Get(obj.Object).(map[string]any)
		volumes := listAt(spec, "volumes")
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
			q, text, err := podspec.QuantityOf(raw)
			if err != nil || q.Sign() <= 0 {
				return fmt.Sprintf("%s: %q is not a positive quantity", at, text)
			}
			sum.Add(q)
		}
		if sum.Cmp(*bound) > 0 {
			return fmt.Sprintf("%s.volumes: the emptyDir sizeLimits add up to %s, over the management cluster's bound of %s (policy.operators[].management.maxScratch)", site.Spec, sum.String(), bound.String())
		}
		if why := writableLayers(spec, site.Spec.String(), bound); why != "" {
			return why
		}
	}
	return ""
}

// writableLayers returns why the containers of spec (at path) with a writable root
// filesystem (podspec.WritableRoots) are not bounded on their node's disk: the pod has no
// ephemeral-storage limit (podspec.EphemeralStorageLimit: what the kubelet holds its writable
// layers, logs and emptyDir volumes to together), or one over bound. "" when every root is
// read-only or the limit keeps to bound.
func writableLayers(spec map[string]any, path string, bound *resource.Quantity) string {
	ps, err := podspec.StorageOf(spec)
	if err != nil {
		return fmt.Sprintf("%s.%v", path, err)
	}
	roots := podspec.WritableRoots(ps)
	if len(roots) == 0 {
		return ""
	}
	limit, ok := podspec.EphemeralStorageLimit(ps)
	if !ok || limit.Sign() <= 0 {
		return fmt.Sprintf("%s.%s.securityContext.readOnlyRootFilesystem: not true, and no container of the pod sets a positive resources.limits.ephemeral-storage: the container's writable layer on a node the shared management cluster's tenants share is unbounded (the hypershift profile bounds it: hypershift/bound-scratch, or makes the root read-only: hypershift/read-only-root-filesystem)", path, roots[0])
	}
	if limit.Cmp(*bound) > 0 {
		return fmt.Sprintf("%s: the pod's ephemeral-storage limit of %s (its containers' resources.limits.ephemeral-storage), which bounds its writable root filesystems, is over the management cluster's bound of %s (policy.operators[].management.maxScratch)", path, limit.String(), bound.String())
	}
	return ""
}
