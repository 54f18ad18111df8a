package hosted

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// disruptionBudget sets a PodDisruptionBudget's budget by availability policy, as
// HyperShift's AdaptPodDisruptionBudget: minAvailable 1 when SingleReplica, maxUnavailable 1
// when HighlyAvailable (neither for another policy), and evicts unhealthy pods always.
func disruptionBudget(pdb *yaml.RNode, policy string) error {
	spec, err := pdb.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec"))
	if err != nil {
		return err
	}
	if err := spec.PipeE(yaml.Clear("minAvailable")); err != nil {
		return err
	}
	if err := spec.PipeE(yaml.Clear("maxUnavailable")); err != nil {
		return err
	}
	switch policy {
	case SingleReplica:
		err = spec.PipeE(yaml.SetField("minAvailable", intNode(1)))
	case HighlyAvailable:
		err = spec.PipeE(yaml.SetField("maxUnavailable", intNode(1)))
	}
	if err != nil {
		return err
	}
	return spec.PipeE(yaml.SetField("unhealthyPodEvictionPolicy", yaml.NewStringRNode("AlwaysAllow")))
}

// componentBudget returns the PodDisruptionBudget HyperShift writes for an API-critical
// workload (its component's pdb.yaml): named as the workload, in its namespace, selecting
// its pods with the workload's own selector; hypershift/pdb-by-availability sets its
// budget. nil when the workload has no selector.
func componentBudget(workload *yaml.RNode) (*yaml.RNode, error) {
	selector, err := workload.Pipe(yaml.Lookup("spec", "selector"))
	if err != nil || selector == nil {
		return nil, err
	}
	pdb, err := yaml.Parse("apiVersion: policy/v1\nkind: PodDisruptionBudget\n")
	if err != nil {
		return nil, err
	}
	if err := pdb.SetName(workload.GetName()); err != nil {
		return nil, err
	}
	if err := pdb.SetNamespace(workload.GetNamespace()); err != nil {
		return nil, err
	}
	return pdb, pdb.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("selector", selector.Copy()))
}

// requestOverrides sets the resource requests of the containers and init containers named in
// overrides (container -> resource -> quantity), keeping their other requests; the request
// of ResourceSwiftNIC sets its limit too, which the API server wants equal.
func requestOverrides(spec *yaml.RNode, overrides map[string]map[string]string) error {
	for _, list := range []string{"initContainers", "containers"} {
		containers, err := elements(spec, list)
		if err != nil {
			return err
		}
		for _, c := range containers {
			requests, ok := overrides[name(c)]
			if !ok {
				continue
			}
			for _, r := range slices.Sorted(maps.Keys(requests)) {
				fields := []string{"requests"}
				if r == ResourceSwiftNIC {
					fields = append(fields, "limits")
				}
				for _, f := range fields {
					if err := c.PipeE(yaml.LookupCreate(yaml.MappingNode, "resources", f), yaml.SetField(r, yaml.NewStringRNode(requests[r]))); err != nil {
						return fmt.Errorf("%s %q: resources.%s: %w", list, name(c), f, err)
					}
				}
			}
		}
	}
	return nil
}

// readOnlyRootFilesystem makes every container's root filesystem read-only, with an emptyDir
// at /tmp (HyperShift's tmp-dir), and says which local volumes may be evicted.
func readOnlyRootFilesystem(spec, meta *yaml.RNode) error {
	tmp, err := yaml.Parse("{name: " + tmpDirVolume + ", emptyDir: {}}")
	if err != nil {
		return err
	}
	volumes, err := appendUnlessMatched(spec, "volumes", "name", tmpDirVolume, tmp)
	if err != nil {
		return err
	}
	containers, err := spec.Pipe(yaml.Lookup("containers"))
	if err != nil || containers == nil {
		return err
	}
	elems, err := containers.Elements()
	if err != nil {
		return err
	}
	for _, c := range elems {
		mount, err := yaml.Parse("{name: " + tmpDirVolume + ", mountPath: /tmp}")
		if err != nil {
			return err
		}
		if _, err := appendUnlessMatched(c, "volumeMounts", "mountPath", "/tmp", mount); err != nil {
			return err
		}
		if err := c.PipeE(yaml.LookupCreate(yaml.MappingNode, "securityContext"), yaml.SetField("readOnlyRootFilesystem", boolNode(true))); err != nil {
			return err
		}
	}
	var local []string
	all, _ := volumes.Elements()
	for _, v := range all {
		if v.Field("emptyDir") != nil || v.Field("hostPath") != nil {
			local = append(local, yaml.GetValue(v.Field("name").Value))
		}
	}
	if len(local) == 0 {
		return nil
	}
	return meta.PipeE(yaml.LookupCreate(yaml.MappingNode, "annotations"), yaml.SetField(annotationSafeToEvictLocalVolumes, yaml.NewStringRNode(strings.Join(local, ","))))
}

// appendUnlessMatched appends elem to the list field of parent, creating the list, unless
// an element of it already has field set to value; it returns the list.
func appendUnlessMatched(parent *yaml.RNode, list, field, value string, elem *yaml.RNode) (*yaml.RNode, error) {
	l, err := parent.Pipe(yaml.LookupCreate(yaml.SequenceNode, list))
	if err != nil {
		return nil, err
	}
	if existing, err := l.Pipe(yaml.MatchElement(field, value)); err != nil || existing != nil {
		return l, err
	}
	return l, l.PipeE(yaml.Append(elem.YNode()))
}

func intNode(n int) *yaml.RNode {
	return yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.Itoa(n)})
}

func boolNode(b bool) *yaml.RNode {
	return yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(b)})
}

func stringMap(m map[string]string) *yaml.RNode {
	n := yaml.NewMapRNode(nil)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		_ = n.PipeE(yaml.SetField(k, yaml.NewStringRNode(m[k])))
	}
	return n
}
