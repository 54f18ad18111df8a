package translate

import (
	"slices"
)

// podTemplatePaths says where the pod template of each workload kind the hypershift profile
// edits by resource is (PodBearingResources). The engine itself finds pod specs, of these
// and every other kind, through package podspec.
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

// AnnotationOwnerHCP is how plans made before the management target owned its objects
// asked the applier for an ownerReference to the named HostedControlPlane. Nothing sets it
// any more; the inverse placement and the applier strip it from old objects.
const AnnotationOwnerHCP = "topolayer.dev/owner-hosted-control-plane"

// PodTemplatePath returns where the pod template of a workload resource is (empty for a
// bare Pod); false for a resource that bears no pods.
func PodTemplatePath(resource string) ([]string, bool) {
	p, ok := podTemplatePaths[resource]
	return slices.Clone(p), ok
}

// WorkloadGroup returns the API group of a pod-bearing resource (PodBearingResources).
func WorkloadGroup(resource string) string { return workloadGroups[resource] }
