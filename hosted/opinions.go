package hosted

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/routing"
)

// ProfileOptions are what a profile reads besides its name. The zero value gives the
// profile's opinions that need nothing else.
type ProfileOptions struct {
	// HostedControlPlane is the HostedControlPlane the operands run in; nil when unknown.
	// With it the hypershift profile adds the opinions that read it (hcpOpinions).
	HostedControlPlane *HostedControlPlane
	// ManagementAssignsNoUIDs says the management cluster assigns no UIDs to pods (it has
	// no SecurityContextConstraints): every control-plane pod then runs as
	// DefaultSecurityContextUID, as HyperShift's SetDefaultSecurityContext makes it.
	ManagementAssignsNoUIDs bool
	// Components are what HyperShift's components declare of themselves and an operator's
	// output does not say: payload images, request serving, multi-zone spread, konnectivity
	// and the availability prober (ComponentOptions).
	Components ComponentOptions
	// GuestAPIServer is the guest API server's address as the pods of the HCP namespace
	// reach it, which the availability prober waits for; default: the kube-apiserver
	// Service's, by the HostedControlPlane's platform (HostedControlPlane.InClusterAPIServer).
	GuestAPIServer string
}

// DefaultGuestAPIServer is the guest API server's address in an HCP namespace: its
// kube-apiserver Service.
const DefaultGuestAPIServer = "https://kube-apiserver:6443"

// ibmCloudGuestAPIServer is that address on IBM Cloud, whose kube-apiserver Service serves
// on port 2040 (HyperShift's InClusterKASURL).
const ibmCloudGuestAPIServer = "https://kube-apiserver:2040"

// InClusterAPIServer returns the guest API server's address as the pods of the HCP namespace
// reach it, by the platform, as HyperShift's InClusterKASURL: DefaultGuestAPIServer, but on
// IBM Cloud. A nil HostedControlPlane (not known) gives DefaultGuestAPIServer.
func (h *HostedControlPlane) InClusterAPIServer() string {
	if h != nil && h.Platform == "IBMCloud" {
		return ibmCloudGuestAPIServer
	}
	return DefaultGuestAPIServer
}

// DefaultSecurityContextUID is the user HyperShift runs control-plane pods as where the
// management cluster assigns none.
const DefaultSecurityContextUID = 1001

// Values the component framework's opinions set.
const (
	// ConfigMapVolumeDefaultMode is every ConfigMap volume's mode (0644).
	ConfigMapVolumeDefaultMode = 420
	// SecretVolumeDefaultMode is every Secret volume's mode (0640).
	SecretVolumeDefaultMode = 416
	// TerminationMessageFallbackToLogsOnError is every container's terminationMessagePolicy.
	TerminationMessageFallbackToLogsOnError = "FallbackToLogsOnError"
)

// podEdit changes one workload: obj is the object, spec its pod spec and meta its pod
// template's metadata (both created when absent), component its standalone name.
type podEdit func(obj, spec, meta *yaml.RNode, component string) error

// workloadOpinion returns one opinion of the hypershift profile as a transform named
// hypershift/<name> on the workloads of one resource placed on the management cluster.
func workloadOpinion(name, resource string, edit podEdit) transform.Transform {
	group := podspec.WorkloadGroup(resource)
	path, _ := podspec.PodTemplatePath(resource)
	return transform.Transform{
		Name: ProfileHyperShift + "/" + name, Cluster: routing.ClusterManagement,
		Match: routing.Match{Group: &group, Resource: resource},
		Filter: func(c transform.Context) (kio.Filter, error) {
			component := c.Source.Identity.Name
			return kio.FilterAll(yaml.FilterFunc(func(obj *yaml.RNode) (*yaml.RNode, error) {
				spec, err := yamlnode.LookupCreate(obj, append(slices.Clone(path), "spec")...)
				if err != nil {
					return nil, err
				}
				meta, err := yamlnode.LookupCreate(obj, append(slices.Clone(path), "metadata")...)
				if err != nil {
					return nil, err
				}
				return obj, edit(obj, spec, meta, component)
			})), nil
		},
	}
}

// specOpinion is workloadOpinion for an edit that creates nothing it does not set, of the
// workloads of one component when component is not "": edit gets the object and its pod
// spec, nil when the object has none.
func specOpinion(name, resource, component string, edit func(obj, spec *yaml.RNode, component string) error) transform.Transform {
	group := podspec.WorkloadGroup(resource)
	path, _ := podspec.PodTemplatePath(resource)
	return transform.Transform{
		Name: ProfileHyperShift + "/" + name, Cluster: routing.ClusterManagement,
		Match: routing.Match{Group: &group, Resource: resource, Name: component},
		Filter: func(c transform.Context) (kio.Filter, error) {
			component := c.Source.Identity.Name
			return kio.FilterAll(yaml.FilterFunc(func(obj *yaml.RNode) (*yaml.RNode, error) {
				spec, err := yamlnode.Lookup(obj, append(slices.Clone(path), "spec")...)
				if err != nil {
					return nil, err
				}
				return obj, edit(obj, spec, component)
			})), nil
		},
	}
}

// podSpecOpinion is specOpinion for an edit of the pod spec alone, of the workloads that
// have one.
func podSpecOpinion(name, resource string, edit func(spec *yaml.RNode, component string) error) transform.Transform {
	return specOpinion(name, resource, "", func(_, spec *yaml.RNode, component string) error {
		if spec == nil {
			return nil
		}
		return edit(spec, component)
	})
}

// frameworkOpinions returns the opinions of HyperShift's component framework that need
// nothing of the HostedControlPlane but its namespace (the request-serving isolation of the
// node affinity reads it when known), each a named transform on the
// management cluster's workloads (a bare Pod is no component of HyperShift's), in
// HyperShift's order: ConfigMap and Secret volume modes (volume-default-modes), the image pull
// policy of containers (image-pull-policy), the payload's images, konnectivity sidecars and
// availability prober the ComponentOptions configure (images-from-payload,
// konnectivity-proxy, availability-prober; the sidecars also take the HostedControlPlane's
// proxy and trust bundles when it has them: konnectivity-hcp-proxy,
// konnectivity-hcp-trust-bundles), every container's terminationMessagePolicy
// (termination-message-policy), where the management cluster assigns no UIDs the pod's user
// (default-uid), the node affinity and colocation by the HCP namespace
// (control-plane-node-affinity, colocation), and the request-serving label
// (request-serving).
func frameworkOpinions(o ProfileOptions) []transform.Transform {
	guestServer := o.GuestAPIServer
	if guestServer == "" {
		guestServer = o.HostedControlPlane.InClusterAPIServer()
	}
	var out []transform.Transform
	for _, resource := range podspec.PodBearingResources() {
		if resource == "pods" {
			continue
		}
		out = append(out,
			podSpecOpinion("volume-default-modes", resource, func(spec *yaml.RNode, _ string) error { return volumeDefaultModes(spec) }),
			podSpecOpinion("image-pull-policy", resource, func(spec *yaml.RNode, _ string) error { return imagePullPolicy(spec) }),
		)
		out = append(out, componentInjections(resource, o.Components, guestServer, o.HostedControlPlane)...)
		out = append(out,
			podSpecOpinion("termination-message-policy", resource, func(spec *yaml.RNode, _ string) error { return terminationMessagePolicy(spec) }),
		)
		if o.ManagementAssignsNoUIDs {
			out = append(out, podSpecOpinion("default-uid", resource, defaultUID))
		}
		out = append(out, isolation(resource, o.Components, o.HostedControlPlane)...)
	}
	return out
}

// spreadOpinions returns the multi-zone spread of the components the ComponentOptions name,
// on Deployments and StatefulSets: last, as it selects the pods by every label the other
// opinions set.
func spreadOpinions(o ProfileOptions) []transform.Transform {
	var out []transform.Transform
	for _, resource := range []string{"deployments", "statefulsets"} {
		for _, component := range o.Components.MultiZoneSpread {
			out = append(out, multiZoneSpread(resource, component, o.HostedControlPlane))
		}
	}
	return out
}

// volumeDefaultModes sets the mode of every ConfigMap volume to 0644 and of every Secret
// volume to 0640, whatever the operator set (HyperShift's enforceVolumesDefaultMode; projected
// volumes keep theirs).
func volumeDefaultModes(spec *yaml.RNode) error {
	volumes, err := elements(spec, "volumes")
	if err != nil {
		return err
	}
	for _, v := range volumes {
		for _, m := range []struct {
			source string
			mode   int
		}{{"configMap", ConfigMapVolumeDefaultMode}, {"secret", SecretVolumeDefaultMode}} {
			s := v.Field(m.source)
			if s == nil || s.Value.YNode().Kind != yaml.MappingNode {
				continue
			}
			if err := s.Value.PipeE(yaml.SetField("defaultMode", intNode(m.mode))); err != nil {
				return fmt.Errorf("volume %s: %w", name(v), err)
			}
		}
	}
	return nil
}

// imagePullPolicy sets every container's (not init container's) imagePullPolicy to
// IfNotPresent, Always for an image tagged :latest (HyperShift's enforceImagePullPolicy). A
// container without an image, which HyperShift refuses, is left as the operator wrote it:
// the API server refuses it when it is applied, and an operator's output from a run without
// its image environment (the corpus) is still planned whole.
func imagePullPolicy(spec *yaml.RNode) error {
	containers, err := elements(spec, "containers")
	if err != nil {
		return err
	}
	for _, c := range containers {
		image := ""
		if f := c.Field("image"); f != nil {
			image = yaml.GetValue(f.Value)
		}
		if image == "" {
			continue
		}
		policy := "IfNotPresent"
		if strings.HasSuffix(image, ":latest") {
			policy = "Always"
		}
		if err := c.PipeE(yaml.SetField("imagePullPolicy", yaml.NewStringRNode(policy))); err != nil {
			return fmt.Errorf("container %q: %w", name(c), err)
		}
	}
	return nil
}

// terminationMessagePolicy sets every container's and init container's
// terminationMessagePolicy to FallbackToLogsOnError (HyperShift's
// enforceTerminationMessagePolicy).
func terminationMessagePolicy(spec *yaml.RNode) error {
	for _, list := range []string{"initContainers", "containers"} {
		containers, err := elements(spec, list)
		if err != nil {
			return err
		}
		for _, c := range containers {
			if err := c.PipeE(yaml.SetField("terminationMessagePolicy", yaml.NewStringRNode(TerminationMessageFallbackToLogsOnError))); err != nil {
				return fmt.Errorf("%s %q: %w", list, name(c), err)
			}
		}
	}
	return nil
}

// defaultUID makes the pod run as DefaultSecurityContextUID, and etcd's volumes owned by
// that group. HyperShift replaces the pod's securityContext with these fields alone; the
// profile keeps the rest of it, which Pod Security "restricted" needs.
func defaultUID(spec *yaml.RNode, component string) error {
	sc, err := spec.Pipe(yaml.LookupCreate(yaml.MappingNode, "securityContext"))
	if err != nil {
		return err
	}
	if err := sc.PipeE(yaml.SetField("runAsUser", intNode(DefaultSecurityContextUID))); err != nil {
		return err
	}
	if component == "etcd" {
		return sc.PipeE(yaml.SetField("fsGroup", intNode(DefaultSecurityContextUID)))
	}
	return nil
}

// elements returns the elements of the sequence field of node; none when it has none.
func elements(node *yaml.RNode, field string) ([]*yaml.RNode, error) {
	list, err := yamlnode.Lookup(node, field)
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return nil, err
	}
	return list.Elements()
}

// name returns the name field of a container or volume.
func name(node *yaml.RNode) string {
	if f := node.Field("name"); f != nil {
		return yaml.GetValue(f.Value)
	}
	return ""
}

// hcpNamespaceOpinion is workloadOpinion for an edit that reads the HCP namespace the
// workload lands in.
func hcpNamespaceOpinion(name, resource string, edit func(spec, meta *yaml.RNode, component, hcpNamespace string) error) transform.Transform {
	t := workloadOpinion(name, resource, nil)
	t.Filter = func(c transform.Context) (kio.Filter, error) {
		return workloadOpinion(name, resource, func(_, spec, meta *yaml.RNode, component string) error {
			return edit(spec, meta, component, c.HCPNamespace)
		}).Filter(c)
	}
	return t
}

// labelOpinion returns an opinion setting one label on the pods of one component's workloads.
func labelOpinion(name, resource, component, key, value string) transform.Transform {
	t := workloadOpinion(name, resource, func(_, _, meta *yaml.RNode, _ string) error {
		return meta.PipeE(yaml.LookupCreate(yaml.MappingNode, "labels"), yaml.SetField(key, yaml.NewStringRNode(value)))
	})
	t.Match.Name = component
	return t
}
