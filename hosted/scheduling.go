package hosted

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
)

// isolation returns the opinions that place a component's pods near its hosted control
// plane (HyperShift's setControlPlaneIsolation and setColocation) and label those that serve
// requests (setLabels): control-plane-node-affinity, colocation, request-serving.
func isolation(resource string, o ComponentOptions, h *HostedControlPlane) []transform.Transform {
	out := []transform.Transform{
		hcpNamespaceOpinion("control-plane-node-affinity", resource, func(spec, _ *yaml.RNode, component, hcpNamespace string) error {
			return nodeAffinity(spec, hcpNamespace, h, o.requestServing(component))
		}),
		hcpNamespaceOpinion("colocation", resource, func(spec, _ *yaml.RNode, _, hcpNamespace string) error {
			// Built as a tree, not through YAML text: every workload of every plan gets it.
			terms := yamlnode.TreeOf(map[string]any{"t": []any{map[string]any{"weight": int64(100), "podAffinityTerm": map[string]any{
				"labelSelector": map[string]any{"matchLabels": map[string]any{LabelHostedControlPlane: hcpNamespace}},
				"topologyKey":   "kubernetes.io/hostname",
			}}}})
			return spec.PipeE(yaml.LookupCreate(yaml.MappingNode, "affinity", "podAffinity"),
				yaml.SetField("preferredDuringSchedulingIgnoredDuringExecution", terms.Field("t").Value))
		}),
	}
	for _, component := range o.RequestServing {
		out = append(out, labelOpinion("request-serving", resource, component, LabelRequestServingComponent, "true"))
	}
	return out
}

// nodeAffinity prefers the management cluster's control-plane nodes (weight 50) and the
// hosted cluster's own (100); a request-serving component under the HostedControlPlane's
// dedicated request-serving topology also tolerates and requires its cluster's
// request-serving nodes, with the HostedControlPlane's additional node selector.
func nodeAffinity(spec *yaml.RNode, hcpNamespace string, h *HostedControlPlane, requestServing bool) error {
	// Built as a tree, not through YAML text: every workload of every plan gets it.
	terms := yamlnode.TreeOf(map[string]any{"t": []any{
		map[string]any{"weight": int64(50), "preference": map[string]any{"matchExpressions": []any{
			map[string]any{"key": TaintControlPlane, "operator": "In", "values": []any{"true"}}}}},
		map[string]any{"weight": int64(100), "preference": map[string]any{"matchExpressions": []any{
			map[string]any{"key": TaintCluster, "operator": "In", "values": []any{hcpNamespace}}}}},
	}})
	affinity, err := spec.Pipe(yaml.LookupCreate(yaml.MappingNode, "affinity", "nodeAffinity"))
	if err != nil {
		return err
	}
	if err := affinity.PipeE(yaml.SetField("preferredDuringSchedulingIgnoredDuringExecution", terms.Field("t").Value)); err != nil {
		return err
	}
	if h == nil || !requestServing || h.Annotations[AnnotationTopology] != TopologyDedicatedRequestServing {
		return nil
	}
	toleration, err := yaml.FromMap(map[string]any{"key": LabelRequestServingComponent, "operator": "Equal", "value": "true", "effect": "NoSchedule"})
	if err != nil {
		return err
	}
	if err := spec.PipeE(yaml.LookupCreate(yaml.SequenceNode, "tolerations"), yaml.Append(toleration.YNode())); err != nil {
		return err
	}
	requirements := []any{
		map[string]any{"key": LabelRequestServingComponent, "operator": "In", "values": []any{"true"}},
		map[string]any{"key": TaintCluster, "operator": "In", "values": []any{hcpNamespace}},
	}
	additional := h.RequestServingNodeSelector()
	for _, k := range slices.Sorted(maps.Keys(additional)) {
		requirements = append(requirements, map[string]any{"key": k, "operator": "In", "values": []any{additional[k]}})
	}
	required, err := yaml.FromMap(map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": requirements}}})
	if err != nil {
		return err
	}
	return affinity.PipeE(yaml.SetField("requiredDuringSchedulingIgnoredDuringExecution", required))
}

// RequestServingNodeSelector returns the node labels the HostedControlPlane's
// request-serving-node-additional-selector annotation adds ("key=value,..."; an entry without
// "=" is left out, as HyperShift's ParseNodeSelector leaves it out).
func (h *HostedControlPlane) RequestServingNodeSelector() map[string]string {
	v := h.Annotations[AnnotationRequestServingNodeSelector]
	if v == "" {
		return nil
	}
	out := map[string]string{}
	for entry := range strings.SplitSeq(v, ",") {
		if k, val, ok := strings.Cut(entry, "="); ok {
			out[k] = val
		}
	}
	return out
}

// multiZoneSpread returns the opinion that spreads a component's pods, when it runs more
// than one, across zones (preferred on OpenStack and KubeVirt, the HostedControlPlane's
// platform) and hosts, by pod anti-affinity over the pod's labels (HyperShift's
// setMultizoneSpread). It runs after every opinion that labels the pods.
func multiZoneSpread(resource, component string, h *HostedControlPlane) transform.Transform {
	return specOpinion("multi-zone-spread", resource, component, func(obj, spec *yaml.RNode, _ string) error {
		if spec == nil {
			return nil
		}
		replicas := 1
		if f, err := obj.Pipe(yaml.Lookup("spec", "replicas")); err != nil {
			return err
		} else if f != nil {
			if replicas, err = strconv.Atoi(yaml.GetValue(f)); err != nil {
				return fmt.Errorf("spec.replicas: %w", err)
			}
		}
		if replicas <= 1 {
			return nil
		}
		path, _ := podspec.PodTemplatePath(resource)
		labels, err := obj.Pipe(yaml.Lookup(append(slices.Clone(path), "metadata", "labels")...))
		if err != nil {
			return err
		}
		term := func(topologyKey string) (*yaml.RNode, error) {
			t := yaml.NewMapRNode(nil)
			selector := yaml.NewMapRNode(nil)
			if labels != nil {
				if err := selector.PipeE(yaml.SetField("matchLabels", labels.Copy())); err != nil {
					return nil, err
				}
			}
			if err := t.PipeE(yaml.SetField("labelSelector", selector)); err != nil {
				return nil, err
			}
			return t, t.PipeE(yaml.SetField("topologyKey", yaml.NewStringRNode(topologyKey)))
		}
		anti, err := spec.Pipe(yaml.LookupCreate(yaml.MappingNode, "affinity", "podAntiAffinity"))
		if err != nil {
			return err
		}
		zone, err := term("topology.kubernetes.io/zone")
		if err != nil {
			return err
		}
		if h != nil && (h.Platform == "OpenStack" || h.Platform == "KubeVirt") { // zones by preference alone there
			weighted := yaml.NewMapRNode(nil)
			if err := weighted.PipeE(yaml.SetField("weight", intNode(100))); err != nil {
				return err
			}
			if err := weighted.PipeE(yaml.SetField("podAffinityTerm", zone)); err != nil {
				return err
			}
			if err := anti.PipeE(yaml.LookupCreate(yaml.SequenceNode, "preferredDuringSchedulingIgnoredDuringExecution"), yaml.Append(weighted.YNode())); err != nil {
				return err
			}
		} else if err := anti.PipeE(yaml.LookupCreate(yaml.SequenceNode, "requiredDuringSchedulingIgnoredDuringExecution"), yaml.Append(zone.YNode())); err != nil {
			return err
		}
		host, err := term("kubernetes.io/hostname")
		if err != nil {
			return err
		}
		return anti.PipeE(yaml.LookupCreate(yaml.SequenceNode, "requiredDuringSchedulingIgnoredDuringExecution"), yaml.Append(host.YNode()))
	})
}
