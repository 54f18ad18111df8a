package podspec

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// WritableRoots returns where the containers of spec (initContainers[i], containers[i],
// ephemeralContainers[i]) whose root filesystem is writable are:
// securityContext.readOnlyRootFilesystem is not true. What such a container writes outside
// its volumes is its writable layer, on its node's disk.
func WritableRoots(spec *corev1.PodSpec) []string {
	var out []string
	add := func(list string, i int, sc *corev1.SecurityContext) {
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			out = append(out, fmt.Sprintf("%s[%d]", list, i))
		}
	}
	for i, c := range spec.InitContainers {
		add("initContainers", i, c.SecurityContext)
	}
	for i, c := range spec.Containers {
		add("containers", i, c.SecurityContext)
	}
	for i, c := range spec.EphemeralContainers {
		add("ephemeralContainers", i, c.SecurityContext)
	}
	return out
}

// EphemeralStorageLimit returns the ephemeral-storage limit the kubelet holds a pod of spec
// to, and whether it holds it to one: k8s.io/component-helpers' PodLimits, the sum of the
// app containers' limits or an init container's where that is larger, with the pod's
// overhead, as the kubelet's eviction manager computes it. The kubelet evicts the pod whose writable layers, logs and
// emptyDir volumes on the node's disk together exceed it; a pod none of whose containers
// sets one has none.
func EphemeralStorageLimit(spec *corev1.PodSpec) (resource.Quantity, bool) {
	q, ok := resourcehelper.PodLimits(&corev1.Pod{Spec: *spec}, resourcehelper.PodResourcesOptions{})[corev1.ResourceEphemeralStorage]
	return q, ok
}

// StorageOf returns what of spec (a pod spec, as an unstructured object holds it) the kubelet
// reads to bound its local storage, and nothing else: each container's name, root filesystem
// (securityContext.readOnlyRootFilesystem) and resources.limits.ephemeral-storage, for
// WritableRoots and EphemeralStorageLimit. It reads no other field, so it is cheap; the
// error names a limit that is not a quantity.
func StorageOf(spec map[string]any) (*corev1.PodSpec, error) {
	out := &corev1.PodSpec{}
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		items, _ := spec[list].([]any)
		for i, item := range items {
			m, _ := item.(map[string]any)
			c := corev1.Container{}
			c.Name, _ = m["name"].(string)
			if sc, ok := m["securityContext"].(map[string]any); ok {
				if ro, ok := sc["readOnlyRootFilesystem"].(bool); ok {
					c.SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: &ro}
				}
			}
			if res, ok := m["resources"].(map[string]any); ok {
				if limits, ok := res["limits"].(map[string]any); ok {
					if raw, ok := limits[string(corev1.ResourceEphemeralStorage)]; ok && raw != nil {
						q, text, err := QuantityOf(raw)
						if err != nil || q.Sign() < 0 {
							return nil, fmt.Errorf("%s[%d].resources.limits.ephemeral-storage: %q is not a quantity", list, i, text)
						}
						c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: q}
					}
				}
			}
			switch list {
			case "initContainers":
				out.InitContainers = append(out.InitContainers, c)
			case "containers":
				out.Containers = append(out.Containers, c)
			default:
				out.EphemeralContainers = append(out.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(c)})
			}
		}
	}
	return out, nil
}

// QuantityOf parses a quantity as an unstructured object holds it: a string ("64Mi"), or a
// bare number (of bytes, of cores) that a YAML or JSON document gave without quotes. It
// returns the text it parsed, for a message.
func QuantityOf(raw any) (resource.Quantity, string, error) {
	text, ok := raw.(string)
	if !ok {
		text = fmt.Sprint(raw)
	}
	q, err := resource.ParseQuantity(text)
	return q, text, err
}
