package hosted

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/routing"
)

// HostedControlPlane is what the hypershift profile reads of the HostedControlPlane its
// operands run in: read live from the management cluster, or from a file offline
// (ParseHostedControlPlane). Each opinion that reads it says so in its transform's name.
type HostedControlPlane struct {
	// Namespace and Name identify it.
	Namespace, Name string
	// AvailabilityPolicy is spec.controllerAvailabilityPolicy: HighlyAvailable (default) or
	// SingleReplica.
	AvailabilityPolicy string
	// NodeSelector is spec.nodeSelector, every control-plane pod's.
	NodeSelector map[string]string
	// Tolerations are spec.tolerations, added to every control-plane pod's.
	Tolerations []any
	// Labels are spec.labels, set on every control-plane pod.
	Labels map[string]string
	// Annotations are the object's annotations (priority class overrides, restart date,
	// debug components, resource request overrides).
	Annotations map[string]string
	// ReleaseImage is spec.releaseImage, recorded on every control-plane pod.
	ReleaseImage string
	// Owner is the ownerReference a management target gives every object it writes whole
	// in the namespace (OwnerReference).
	Owner *metav1.OwnerReference
	// Platform is spec.platform.type (AWS, OpenStack, KubeVirt, ...): zones are spread over
	// by preference alone on OpenStack and KubeVirt.
	Platform string
	// AWSRegion is spec.platform.aws.region and AzureCloud spec.platform.azure.cloud: the
	// node domain and cloud endpoints the konnectivity HTTPS proxy does not proxy
	// (DefaultNoProxy).
	AWSRegion, AzureCloud string
	// MachineNetwork, ServiceNetwork and ClusterNetwork are the CIDRs of spec.networking's
	// lists of those names, as HyperShift prints them (DefaultNoProxy).
	MachineNetwork, ServiceNetwork, ClusterNetwork []string
	// Proxy is spec.configuration.proxy, the guest's cluster-wide proxy: the konnectivity
	// HTTPS proxy forwards through it; nil when the HCP has none.
	Proxy *Proxy
	// AdditionalTrustBundle is the name of spec.additionalTrustBundle, a ConfigMap of the HCP
	// namespace whose ca-bundle.crt the konnectivity proxies trust; "" when the HCP has none.
	AdditionalTrustBundle string
	// AuditProfile is spec.configuration.apiServer.audit.profile, the guest's audit policy
	// profile; the API's default, Default, when the HCP names none. With None, HyperShift
	// runs no audit-logs sidecar.
	AuditProfile string
}

// Proxy is what the profile reads of a HostedControlPlane's spec.configuration.proxy.
type Proxy struct {
	// HTTPProxy, HTTPSProxy and NoProxy are httpProxy, httpsProxy and noProxy (a
	// comma-separated list).
	HTTPProxy, HTTPSProxy, NoProxy string
	// TrustedCA is trustedCA.name: a ConfigMap of the HCP namespace whose ca-bundle.crt holds
	// the proxy's CA; "" for none.
	TrustedCA string
}

// auditProfileNone is the audit profile that logs nothing (config.openshift.io/v1
// NoneAuditProfileType); auditProfileDefault the API's default.
const (
	auditProfileNone    = "None"
	auditProfileDefault = "Default"
)

// Availability policies of a HostedControlPlane.
const (
	HighlyAvailable = "HighlyAvailable"
	SingleReplica   = "SingleReplica"
)

// Priority classes of HyperShift's control-plane components, and the HostedControlPlane
// annotations that override them.
const (
	PriorityClassAPICritical          = "hypershift-api-critical"
	PriorityClassEtcd                 = "hypershift-etcd"
	AnnotationControlPlanePriority    = "hypershift.openshift.io/control-plane-priority-class"
	AnnotationAPICriticalPriority     = "hypershift.openshift.io/api-critical-priority-class"
	AnnotationEtcdPriority            = "hypershift.openshift.io/etcd-priority-class"
	AnnotationReleaseImage            = "hypershift.openshift.io/release-image"
	AnnotationRestartDate             = "hypershift.openshift.io/restart-date"
	LabelManagedBy                    = "hypershift.openshift.io/managed-by"
	annotationSafeToEvictLocalVolumes = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
	tmpDirVolume                      = "tmp-dir"
)

// The HostedControlPlane annotations that debug and size HyperShift's components, and the
// resource whose limit follows its request.
const (
	// AnnotationDebugDeployments lists, comma-separated, the components HyperShift scales to
	// zero so that a person can run them by hand.
	AnnotationDebugDeployments = "hypershift.openshift.io/debug-deployments"
	// AnnotationResourceRequestOverridePrefix prefixes the annotations
	// <prefix>/<component>.<container> whose value, "cpu=100m,memory=1Gi", overrides the
	// container's resource requests.
	AnnotationResourceRequestOverridePrefix = "resource-request-override.hypershift.openshift.io"
	// ResourceSwiftNIC is the extended resource whose limit must equal its request: an
	// override of its request sets its limit too.
	ResourceSwiftNIC = "aro.openshift.io/swift-nic"
)

// APICriticalComponents are the components HyperShift runs with the API-critical priority
// class and 3 replicas when highly available.
func APICriticalComponents() []string {
	return []string{"kube-apiserver", "openshift-apiserver", "openshift-oauth-apiserver", "oauth-openshift", "router", "packageserver"}
}

// ParseHostedControlPlane reads what the profile needs of a HostedControlPlane object.
func ParseHostedControlPlane(obj *unstructured.Unstructured) (*HostedControlPlane, error) {
	if gvk := obj.GroupVersionKind(); gvk.GroupKind() != HostedControlPlaneGVK().GroupKind() {
		return nil, fmt.Errorf("%s %s/%s is not a HostedControlPlane", gvk.Kind, obj.GetNamespace(), obj.GetName())
	}
	h := &HostedControlPlane{Namespace: obj.GetNamespace(), Name: obj.GetName(), Annotations: obj.GetAnnotations(), Owner: OwnerReference(obj)}
	fail := func(field string, err error) error {
		return fmt.Errorf("HostedControlPlane %s/%s: spec.%s: %w", h.Namespace, h.Name, field, err)
	}
	var err error
	if h.AvailabilityPolicy, _, err = unstructured.NestedString(obj.Object, "spec", "controllerAvailabilityPolicy"); err != nil {
		return nil, fail("controllerAvailabilityPolicy", err)
	}
	if h.ReleaseImage, _, err = unstructured.NestedString(obj.Object, "spec", "releaseImage"); err != nil {
		return nil, fail("releaseImage", err)
	}
	if h.Platform, _, err = unstructured.NestedString(obj.Object, "spec", "platform", "type"); err != nil {
		return nil, fail("platform.type", err)
	}
	if h.AWSRegion, _, err = unstructured.NestedString(obj.Object, "spec", "platform", "aws", "region"); err != nil {
		return nil, fail("platform.aws.region", err)
	}
	if h.AzureCloud, _, err = unstructured.NestedString(obj.Object, "spec", "platform", "azure", "cloud"); err != nil {
		return nil, fail("platform.azure.cloud", err)
	}
	for _, n := range []struct {
		field string
		cidrs *[]string
	}{{"machineNetwork", &h.MachineNetwork}, {"serviceNetwork", &h.ServiceNetwork}, {"clusterNetwork", &h.ClusterNetwork}} {
		if *n.cidrs, err = networkCIDRs(obj, n.field); err != nil {
			return nil, fail("networking."+n.field, err)
		}
	}
	if h.Proxy, err = parseProxy(obj); err != nil {
		return nil, fail("configuration.proxy", err)
	}
	if h.AdditionalTrustBundle, _, err = unstructured.NestedString(obj.Object, "spec", "additionalTrustBundle", "name"); err != nil {
		return nil, fail("additionalTrustBundle.name", err)
	}
	if h.NodeSelector, _, err = unstructured.NestedStringMap(obj.Object, "spec", "nodeSelector"); err != nil {
		return nil, fail("nodeSelector", err)
	}
	if h.Labels, _, err = unstructured.NestedStringMap(obj.Object, "spec", "labels"); err != nil {
		return nil, fail("labels", err)
	}
	if h.Tolerations, _, err = unstructured.NestedSlice(obj.Object, "spec", "tolerations"); err != nil {
		return nil, fail("tolerations", err)
	}
	if h.AuditProfile, _, err = unstructured.NestedString(obj.Object, "spec", "configuration", "apiServer", "audit", "profile"); err != nil {
		return nil, fail("configuration.apiServer.audit.profile", err)
	}
	if h.AvailabilityPolicy == "" {
		h.AvailabilityPolicy = HighlyAvailable
	}
	if h.AuditProfile == "" {
		h.AuditProfile = auditProfileDefault
	}
	if _, err := h.RequestOverrides(); err != nil {
		return nil, fmt.Errorf("HostedControlPlane %s/%s: %w", h.Namespace, h.Name, err)
	}
	return h, nil
}

// networkCIDRs returns the CIDRs of the list spec.networking.<list> of obj, each printed as
// HyperShift prints its ipnet.IPNet: the address as written (an IPv4 one in its 4-byte form)
// and the prefix length. A CIDR that does not parse is an error, as HyperShift cannot read
// the object either.
func networkCIDRs(obj *unstructured.Unstructured, list string) ([]string, error) {
	entries, _, err := unstructured.NestedSlice(obj.Object, "spec", "networking", list)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("[%d]: %T is not an object", i, e)
		}
		cidr, _, err := unstructured.NestedString(m, "cidr")
		if err != nil {
			return nil, fmt.Errorf("[%d].cidr: %w", i, err)
		}
		ip, network, err := net.ParseCIDR(cidr)
		if err != nil {
			return nil, fmt.Errorf("[%d].cidr: %w", i, err)
		}
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		out = append(out, (&net.IPNet{IP: ip, Mask: network.Mask}).String())
	}
	return out, nil
}

// parseProxy reads spec.configuration.proxy of obj; nil when it has none.
func parseProxy(obj *unstructured.Unstructured) (*Proxy, error) {
	m, found, err := unstructured.NestedMap(obj.Object, "spec", "configuration", "proxy")
	if err != nil || !found {
		return nil, err
	}
	p := &Proxy{}
	for _, f := range []struct {
		path []string
		v    *string
	}{{[]string{"httpProxy"}, &p.HTTPProxy}, {[]string{"httpsProxy"}, &p.HTTPSProxy}, {[]string{"noProxy"}, &p.NoProxy}, {[]string{"trustedCA", "name"}, &p.TrustedCA}} {
		if *f.v, _, err = unstructured.NestedString(m, f.path...); err != nil {
			return nil, fmt.Errorf("%s: %w", strings.Join(f.path, "."), err)
		}
	}
	return p, nil
}

// DefaultNoProxy returns what the konnectivity HTTPS proxy does not forward through the
// HostedControlPlane's proxy (its --no-proxy), as HyperShift's proxy.DefaultNoProxy computes
// it: loopback, the cluster's service domains and .hypershift.local, the machine networks
// (but 0.0.0.0/0), service and cluster networks, the cloud's metadata address on AWS and
// Azure, the node domain on AWS (of the region, when the HCP names one), Azure's wire server
// outside its public cloud (an unset cloud is the API's default, AzurePublicCloud), and the
// proxy's own noProxy entries; sorted, each once, comma-separated.
func (h *HostedControlPlane) DefaultNoProxy() string {
	set := sets.New("127.0.0.1", "localhost", ".svc", ".cluster.local", ".hypershift.local")
	for _, cidr := range h.MachineNetwork {
		if cidr != "0.0.0.0/0" {
			set.Insert(cidr)
		}
	}
	set.Insert(h.ServiceNetwork...)
	switch h.Platform {
	case "AWS":
		set.Insert("169.254.169.254")
		switch h.AWSRegion {
		case "":
		case "us-east-1":
			set.Insert(".ec2.internal")
		default:
			set.Insert("." + h.AWSRegion + ".compute.internal")
		}
	case "Azure":
		set.Insert("169.254.169.254")
		if h.AzureCloud != "" && h.AzureCloud != "AzurePublicCloud" {
			set.Insert("168.63.129.16")
		}
	}
	set.Insert(h.ClusterNetwork...)
	if h.Proxy != nil {
		for v := range strings.SplitSeq(h.Proxy.NoProxy, ",") {
			if v != "" {
				set.Insert(v)
			}
		}
	}
	return strings.Join(sets.List(set), ",")
}

// DebugComponents returns the components the HostedControlPlane's debug-deployments
// annotation lists, which HyperShift scales to zero.
func (h *HostedControlPlane) DebugComponents() []string {
	v, ok := h.Annotations[AnnotationDebugDeployments]
	if !ok {
		return nil
	}
	var out []string
	for c := range strings.SplitSeq(v, ",") {
		if c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// RequestOverrides returns the resource requests the HostedControlPlane's
// resource-request-override annotations set, by component, container and resource, each
// quantity in its canonical form. A request whose quantity does not parse is left out, as
// HyperShift leaves it out; an annotation without a container, or a request without "=",
// is an error naming the annotation (HyperShift cannot read it either), returned with the
// overrides of the others.
func (h *HostedControlPlane) RequestOverrides() (map[string]map[string]map[string]string, error) {
	var out map[string]map[string]map[string]string
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(h.Annotations)) {
		rest, ok := strings.CutPrefix(key, AnnotationResourceRequestOverridePrefix+"/")
		if !ok {
			continue
		}
		component, container, ok := strings.Cut(rest, ".")
		if !ok {
			errs = append(errs, fmt.Errorf("metadata.annotations[%s]: want %s/<component>.<container>", key, AnnotationResourceRequestOverridePrefix))
			continue
		}
		requests := map[string]string{}
		for request := range strings.SplitSeq(h.Annotations[key], ",") {
			name, value, ok := strings.Cut(request, "=")
			if !ok {
				errs = append(errs, fmt.Errorf("metadata.annotations[%s]: %q: want <resource>=<quantity>", key, request))
				continue
			}
			q, err := resource.ParseQuantity(value)
			if err != nil {
				continue
			}
			requests[name] = q.String()
		}
		if out == nil {
			out = map[string]map[string]map[string]string{}
		}
		if out[component] == nil {
			out[component] = map[string]map[string]string{}
		}
		out[component][container] = requests
	}
	return out, errors.Join(errs...)
}

// Replicas returns how many replicas HyperShift runs a component with: 1 when the
// control plane is SingleReplica, 3 for etcd and the API-critical components, else 2.
func (h *HostedControlPlane) Replicas(component string) int {
	return h.replicas(component, false)
}

// replicas is Replicas for a component that may serve requests: 2 under the dedicated
// request-serving topology when highly available.
func (h *HostedControlPlane) replicas(component string, requestServing bool) int {
	switch {
	case h.AvailabilityPolicy == SingleReplica:
		return 1
	case requestServing && h.Annotations[AnnotationTopology] == TopologyDedicatedRequestServing:
		return 2
	case isAPICritical(component):
		return 3
	}
	return 2
}

// isAPICritical reports whether HyperShift runs a component as etcd or an API-critical one:
// with 3 replicas when highly available and a PodDisruptionBudget of its own.
func isAPICritical(component string) bool {
	return component == "etcd" || slices.Contains(APICriticalComponents(), component)
}

// PriorityClass returns the priority class HyperShift gives a component: by criticality,
// overridden by the HostedControlPlane's annotation for that criticality.
func (h *HostedControlPlane) PriorityClass(component string) string {
	class, override := PriorityClassControlPlane, AnnotationControlPlanePriority
	switch {
	case component == "etcd":
		class, override = PriorityClassEtcd, AnnotationEtcdPriority
	case slices.Contains(APICriticalComponents(), component):
		class, override = PriorityClassAPICritical, AnnotationAPICriticalPriority
	}
	if v := h.Annotations[override]; v != "" {
		return v
	}
	return class
}

// hcpOpinions returns the generic opinions of HyperShift's component framework that read the
// HostedControlPlane, each a named transform of the hypershift profile on the management
// cluster's workloads: replicas and rollout strategy by availability policy (Deployments),
// the debug components scaled to zero (Deployments and StatefulSets), the priority class by
// criticality with the HCP's overrides, the HCP's nodeSelector, tolerations and labels, the
// release image and restart date annotations, a read-only root filesystem with a /tmp
// emptyDir, and the HCP's resource request overrides; a PodDisruptionBudget beside each
// Deployment or StatefulSet of etcd or an API-critical component, as HyperShift writes one
// for each (hypershift/api-critical-pdb: a transform that adds); and the budget of every
// PodDisruptionBudget by availability policy. c says which components serve requests.
func hcpOpinions(h *HostedControlPlane, c ComponentOptions) []transform.Transform {
	var out []transform.Transform
	for _, resource := range podspec.PodBearingResources() {
		if resource == "pods" {
			continue // a bare Pod is no component of HyperShift's
		}
		add := func(name string, edit podEdit) {
			out = append(out, workloadOpinion(name, resource, edit))
		}
		if resource == "deployments" {
			add("replicas-by-availability", func(obj, _, _ *yaml.RNode, component string) error {
				n := h.replicas(component, c.requestServing(component))
				if err := obj.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("replicas", intNode(n))); err != nil {
					return err
				}
				if err := obj.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("revisionHistoryLimit", intNode(2))); err != nil {
					return err
				}
				if n <= 1 {
					return nil
				}
				surge, unavailable := 1, 0
				if c.requestServing(component) {
					unavailable = 1
				}
				if n > 2 {
					surge, unavailable = 0, 1
				}
				strategy, err := obj.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec", "strategy"))
				if err != nil {
					return err
				}
				if err := strategy.PipeE(yaml.SetField("type", yaml.NewStringRNode("RollingUpdate"))); err != nil {
					return err
				}
				return strategy.PipeE(yaml.LookupCreate(yaml.MappingNode, "rollingUpdate"), yaml.Tee(yaml.SetField("maxSurge", intNode(surge))), yaml.SetField("maxUnavailable", intNode(unavailable)))
			})
		}
		if resource == "deployments" || resource == "statefulsets" {
			for _, component := range h.DebugComponents() {
				out = append(out, specOpinion("debug-deployments", resource, component, func(obj, _ *yaml.RNode, _ string) error {
					return obj.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("replicas", intNode(0)))
				}))
			}
		}
		add("priority-class-by-criticality", func(_, spec, _ *yaml.RNode, component string) error {
			return spec.PipeE(yaml.SetField("priorityClassName", yaml.NewStringRNode(h.PriorityClass(component))))
		})
		if len(h.NodeSelector) > 0 {
			add("hcp-node-selector", func(_, spec, _ *yaml.RNode, _ string) error {
				return spec.PipeE(yaml.SetField("nodeSelector", stringMap(h.NodeSelector)))
			})
		}
		if len(h.Tolerations) > 0 {
			add("hcp-tolerations", func(_, spec, _ *yaml.RNode, _ string) error {
				list, err := spec.Pipe(yaml.LookupCreate(yaml.SequenceNode, "tolerations"))
				if err != nil {
					return err
				}
				for _, t := range h.Tolerations {
					n, err := yaml.FromMap(t.(map[string]any))
					if err != nil {
						return err
					}
					if err := list.PipeE(yaml.Append(n.YNode())); err != nil {
						return err
					}
				}
				return nil
			})
		}
		add("hcp-labels-and-annotations", func(obj, spec, meta *yaml.RNode, _ string) error {
			// The workload's own labels say the control-plane-operator manages it, as
			// setDefaultOptions does: the HostedControlPlane's Degraded condition counts the
			// unavailable replicas of the Deployments so labelled. The HCP's labels go on its
			// pods.
			if err := yamlnode.SetMetadataString(obj, "labels", LabelManagedBy, "control-plane-operator"); err != nil {
				return err
			}
			labels := h.Labels
			for _, k := range slices.Sorted(maps.Keys(labels)) {
				if err := meta.PipeE(yaml.LookupCreate(yaml.MappingNode, "labels"), yaml.SetField(k, yaml.NewStringRNode(labels[k]))); err != nil {
					return err
				}
			}
			annotations := map[string]string{}
			if h.ReleaseImage != "" {
				annotations[AnnotationReleaseImage] = h.ReleaseImage
			}
			if d := h.Annotations[AnnotationRestartDate]; d != "" {
				annotations[AnnotationRestartDate] = d
			}
			for _, k := range slices.Sorted(maps.Keys(annotations)) {
				if err := meta.PipeE(yaml.LookupCreate(yaml.MappingNode, "annotations"), yaml.SetField(k, yaml.NewStringRNode(annotations[k]))); err != nil {
					return err
				}
			}
			return nil
		})
		add("read-only-root-filesystem", func(_, spec, meta *yaml.RNode, _ string) error {
			return readOnlyRootFilesystem(spec, meta)
		})
		overrides, _ := h.RequestOverrides() // ParseHostedControlPlane reported the malformed ones
		for _, component := range slices.Sorted(maps.Keys(overrides)) {
			out = append(out, specOpinion("resource-request-overrides", resource, component, func(_, spec *yaml.RNode, _ string) error {
				if spec == nil {
					return nil
				}
				return requestOverrides(spec, overrides[component])
			}))
		}
	}
	for _, resource := range []string{"deployments", "statefulsets"} {
		apps := "apps"
		out = append(out, transform.Transform{
			Name: ProfileHyperShift + "/api-critical-pdb", Cluster: routing.ClusterManagement,
			Match: routing.Match{Group: &apps, Resource: resource},
			Adds: func(c transform.Context, obj *yaml.RNode) (*yaml.RNode, error) {
				if !isAPICritical(c.Source.Identity.Name) {
					return nil, nil
				}
				return componentBudget(obj)
			},
		})
	}
	policy := "policy"
	out = append(out, transform.Transform{
		Name: ProfileHyperShift + "/pdb-by-availability", Cluster: routing.ClusterManagement,
		Match: routing.Match{Group: &policy, Resource: "poddisruptionbudgets"},
		Filter: func(transform.Context) (kio.Filter, error) {
			return kio.FilterAll(yaml.FilterFunc(func(obj *yaml.RNode) (*yaml.RNode, error) {
				return obj, disruptionBudget(obj, h.AvailabilityPolicy)
			})), nil
		},
	})
	return out
}

// Equal reports whether h and o give the profile the same inputs: the same policy, node
// selector, tolerations, labels, annotations, release image, platform, networks, proxy and
// additional trust bundle (nil for neither).
func (h *HostedControlPlane) Equal(o *HostedControlPlane) bool {
	if h == nil || o == nil {
		return h == o
	}
	return reflect.DeepEqual(*h, *o)
}
