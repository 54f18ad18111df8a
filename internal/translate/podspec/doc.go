// Package podspec finds the pod specs of an object: where a Pod, a PodTemplate, a workload
// or a custom resource holds a PodSpec. The built-in pod-bearing kinds are found by their
// schema's paths (Known); any other kind, whose schema the engine does not hold (a custom
// resource), by the shape of a PodSpec: a mapping whose containers (initContainers,
// ephemeralContainers) list holds mappings with a name, one at least with an image, at any
// depth. The search is one walk over the object, bounded in depth and size (MaxDepth,
// MaxValues): a body beyond them is refused, not searched in part.
//
// It also reads what the kubelet bounds a pod's local storage by (StorageOf, WritableRoots,
// EphemeralStorageLimit). It does not judge what it finds: package podsecurity checks and
// strips a pod spec, the engine (package translate) scopes, renames and contains it.
//
//	sites, err := podspec.Find(schema.GroupKind{Group: "apps", Kind: "Deployment"}, obj)
//	for _, s := range sites {
//		spec, _ := s.Spec.Get(obj).(map[string]any) // spec.template.spec
//	}
package podspec
