package podspec

import (
	"maps"
	"slices"
)

// podTemplatePaths says where the pod template of each workload kind the hypershift profile
// edits by resource is (PodBearingResources). The engine itself finds pod specs, of these
// and every other kind, with Find.
var podTemplatePaths = map[string][]string{
	"deployments":  {"spec", "template"},
	"statefulsets": {"spec", "template"},
	"daemonsets":   {"spec", "template"},
	"replicasets":  {"spec", "template"},
	"jobs":         {"spec", "template"},
	"cronjobs":     {"spec", "jobTemplate", "spec", "template"},
	"pods":         {},
}

var workloadGroups = map[string]string{
	"pods":        "",
	"deployments": "apps", "statefulsets": "apps", "daemonsets": "apps", "replicasets": "apps",
	"jobs": "batch", "cronjobs": "batch",
}

// PodTemplatePath returns where the pod template of a workload resource is (empty for a
// bare Pod); false for a resource that bears no pods.
func PodTemplatePath(resource string) ([]string, bool) {
	p, ok := podTemplatePaths[resource]
	return slices.Clone(p), ok
}

// WorkloadGroup returns the API group of a pod-bearing resource (PodBearingResources).
func WorkloadGroup(resource string) string { return workloadGroups[resource] }

// IsPodBearing reports whether resource is a kind that carries pods: a pod template or a Pod.
func IsPodBearing(resource string) bool {
	_, ok := podTemplatePaths[resource]
	return ok
}

// PodBearingResources lists the pod-bearing resources, sorted.
func PodBearingResources() []string { return slices.Sorted(maps.Keys(podTemplatePaths)) }
