package hosted

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/podsecurity"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/routing"
)

// Bounds of a pod's scratch volumes and of a claim's storage on the management cluster
// (policy.Containment.MaxScratch, MaxClaim).
const (
	// DefaultMaxScratch bounds the sum of the sizeLimits of one pod's emptyDir volumes.
	DefaultMaxScratch = 2 << 30
	// DefaultMaxClaim bounds the storage of one claim (policy.Containment.MaxClaim): 8 GiB,
	// the volume HyperShift gives a hosted control plane's own etcd by default
	// (DefaultPersistentVolumeEtcdStorageSize in its API). No operand's claim is known
	// safe beyond what the control plane's database holds.
	DefaultMaxClaim = 8 << 30
	// defaultScratch is the sizeLimit hypershift/bound-scratch gives an emptyDir that has none,
	// beyond what an audit log kept in it needs.
	defaultScratch = 256 << 20
	// defaultWritableLayer is what hypershift/bound-scratch leaves each container whose root
	// filesystem is writable in a pod's ephemeral-storage limit: what a server writes outside
	// its volumes (a trust store it updates, a lock file) is small, and a pod of a server,
	// two konnectivity proxies, an audit-log sidecar and a prober stays, with its audit log's
	// volume, within DefaultMaxScratch.
	defaultWritableLayer = 64 << 20
	// mebibyte is the unit of --audit-log-maxsize (k8s.io/apiserver's log rotation counts
	// megabytes of 1024×1024 bytes).
	mebibyte = 1 << 20
)

// boundScratch returns hypershift/bound-scratch: every emptyDir of a pod the profile places
// on the management cluster that sets no sizeLimit gets one, and a pod with a container whose
// root filesystem is still writable (hypershift/read-only-root-filesystem is off, or the
// container is an init container, as HyperShift's availability prober is) gets an
// ephemeral-storage limit that covers its volumes and its writable layers
// (boundWritableLayers), so that the kubelet evicts the pod that fills its scratch space
// rather than let it fill a node other tenants' control planes share (policy/management-fields
// refuses an unbounded one). An emptyDir's limit is defaultScratch, plus, for the volume that
// holds an audit log the server rotates (--audit-log-path with --audit-log-maxsize and
// --audit-log-maxbackup), the files it keeps: HyperShift's own servers keep 1 backup of
// 10 MiB, CAO's OAuth server 10 of 100 MiB. It runs after every other opinion: on the
// workloads by resource, and on every other kind that holds pod specs but a shadow copy,
// which nothing runs.
func boundScratch() []transform.Transform {
	const name = ProfileHyperShift + "/bound-scratch"
	edit := func(_, spec *yaml.RNode) error { return boundScratchVolumes(spec) }
	var out []transform.Transform
	for _, resource := range podspec.PodBearingResources() {
		group := podspec.WorkloadGroup(resource)
		path, _ := podspec.PodTemplatePath(resource)
		out = append(out, transform.Transform{Name: name, Cluster: routing.ClusterManagement, Match: routing.Match{Group: &group, Resource: resource},
			Filter: func(transform.Context) (kio.Filter, error) {
				return podsecurity.Filter{PodTemplatePath: path, Edit: edit}, nil
			}})
	}
	return append(out, transform.Transform{Name: name, Cluster: routing.ClusterManagement, Applies: holdsUnnamedPodSpec(),
		Filter: func(transform.Context) (kio.Filter, error) { return podsecurity.Found{Edit: edit}, nil }})
}

// boundScratchVolumes sets the sizeLimit of each emptyDir of a pod spec that has none, then
// bounds its writable layers (boundWritableLayers).
func boundScratchVolumes(spec *yaml.RNode) error {
	logs := map[string]int64{} // volume -> bytes of audit log kept in it
	for _, list := range []string{"initContainers", "containers"} {
		containers, err := elements(spec, list)
		if err != nil {
			return err
		}
		for _, c := range containers {
			file, ok, err := auditLogPath(c)
			if err != nil || !ok || file == "-" {
				continue // a path the audit-logs opinion refuses bounds nothing here
			}
			volume, _, err := mountHolding(c, file)
			if err != nil {
				continue
			}
			logs[volume] += auditLogRetention(c)
		}
	}
	volumes, err := elements(spec, "volumes")
	if err != nil {
		return err
	}
	for _, v := range volumes {
		dir := v.Field("emptyDir")
		if dir == nil || dir.Value.YNode().Kind != yaml.MappingNode || dir.Value.Field("sizeLimit") != nil {
			continue
		}
		limit := resource.NewQuantity(defaultScratch+logs[name(v)], resource.BinarySI)
		if err := dir.Value.PipeE(yaml.SetField("sizeLimit", yaml.NewStringRNode(limit.String()))); err != nil {
			return fmt.Errorf("volumes %q: emptyDir.sizeLimit: %w", name(v), err)
		}
	}
	return boundWritableLayers(spec)
}

// boundWritableLayers makes sure a pod spec whose containers' root filesystems are not all
// read-only (podspec.WritableRoots) has an ephemeral-storage limit, and that the limit, which
// the kubelet holds the pod's writable layers, logs and emptyDir volumes to together
// (podspec.EphemeralStorageLimit), covers its emptyDirs on the node's disk and
// defaultWritableLayer per writable container: the pod is then evicted only when a volume
// outgrows its sizeLimit or its layers outgrow what is left. What is missing is added to the
// first container's limit. A pod whose roots are all read-only and that sets no limit is
// left alone.
func boundWritableLayers(spec *yaml.RNode) error {
	ps, err := podspec.StorageOf(storageFields(spec))
	if err != nil {
		return nil // not a limit the API server takes: policy/management-fields names the field
	}
	roots := podspec.WritableRoots(ps)
	if _, limited := podspec.EphemeralStorageLimit(ps); (len(roots) == 0 && !limited) || len(ps.Containers) == 0 {
		return nil
	}
	need := resource.NewQuantity(int64(len(roots))*defaultWritableLayer, resource.BinarySI)
	volumes, err := elements(spec, "volumes")
	if err != nil {
		return err
	}
	for _, v := range volumes {
		dir := v.Field("emptyDir")
		if dir == nil || dir.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		if medium := dir.Value.Field("medium"); medium != nil && yaml.GetValue(medium.Value) == string(corev1.StorageMediumMemory) {
			continue // the node's memory, not its disk
		}
		if limit := dir.Value.Field("sizeLimit"); limit != nil {
			if q, err := resource.ParseQuantity(yaml.GetValue(limit.Value)); err == nil {
				need.Add(q)
			}
		}
	}
	apps, _ := podspec.EphemeralStorageLimit(&corev1.PodSpec{Containers: ps.Containers})
	if apps.Cmp(*need) >= 0 {
		return nil
	}
	first := resource.Quantity{}
	if q, ok := ps.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage]; ok {
		first = q
	}
	need.Sub(apps)
	first.Add(*need)
	containers, err := elements(spec, "containers")
	if err != nil {
		return err
	}
	limit := resource.NewQuantity(first.Value(), resource.BinarySI).String()
	if err := containers[0].PipeE(yaml.LookupCreate(yaml.MappingNode, "resources", "limits"), yaml.SetField("ephemeral-storage", yaml.NewStringRNode(limit))); err != nil {
		return fmt.Errorf("containers %q: resources.limits.ephemeral-storage: %w", name(containers[0]), err)
	}
	return nil
}

// auditLogRetention returns the bytes of audit log a container keeps, by its flags: the file
// being written and its backups, each up to --audit-log-maxsize MiB; 0 when it rotates
// without a bound on its backups (no --audit-log-maxbackup, or 0: every backup kept) or not
// at all (no --audit-log-maxsize): defaultScratch bounds it then, and the pod is evicted when
// it grows past.
func auditLogRetention(c *yaml.RNode) int64 {
	number := func(flag string) int64 {
		v, ok, err := flagValue(c, flag)
		if err != nil || !ok {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
	size, backups := number("--audit-log-maxsize"), number("--audit-log-maxbackup")
	if size == 0 || backups == 0 {
		return 0
	}
	return (backups + 1) * size * mebibyte
}

// storageFields returns the fields of a pod spec's containers podspec.StorageOf reads (name,
// securityContext.readOnlyRootFilesystem, resources.limits.ephemeral-storage), as an
// unstructured pod spec holds them, without decoding the rest of the spec.
func storageFields(spec *yaml.RNode) map[string]any {
	out := map[string]any{}
	for _, list := range []string{"initContainers", "containers"} {
		containers, _ := elements(spec, list)
		items := make([]any, 0, len(containers))
		for _, c := range containers {
			m := map[string]any{"name": name(c)}
			if ro, _ := yamlnode.Lookup(c, "securityContext", "readOnlyRootFilesystem"); ro != nil {
				m["securityContext"] = map[string]any{"readOnlyRootFilesystem": ro.YNode().Value == "true"}
			}
			if limit, _ := yamlnode.Lookup(c, "resources", "limits", string(corev1.ResourceEphemeralStorage)); limit != nil {
				m["resources"] = map[string]any{"limits": map[string]any{string(corev1.ResourceEphemeralStorage): limit.YNode().Value}}
			}
			items = append(items, m)
		}
		out[list] = items
	}
	return out
}
