package hosted

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/transform"
)

// ComponentOptions are what HyperShift's control-plane components declare of themselves and
// topolayer cannot read in an operator's output: the release payload's images, and, by the
// workload's standalone name (its component), whether it serves requests, spreads across
// zones, and gets the konnectivity sidecars, the availability prober and the audit-logs
// sidecar. The zero value
// declares nothing: the opinions that read these options do not run.
type ComponentOptions struct {
	// Images maps names of the release payload's images to their pull specs: a container's
	// or init container's image that names a key is replaced by its pull spec
	// (images-from-payload), and the sidecars take theirs from it (ImageControlPlaneOperator,
	// ImageAvailabilityProber).
	Images map[string]string `json:"images,omitempty"`
	// RequestServing names the components that serve requests: their pods get
	// LabelRequestServingComponent (request-serving), their rollout tolerates one unavailable
	// pod out of two, and under the HostedControlPlane's dedicated request-serving topology
	// they run 2 replicas on their cluster's request-serving nodes.
	RequestServing []string `json:"requestServing,omitempty"`
	// MultiZoneSpread names the components whose pods, when more than one, must run in
	// different zones and on different hosts (multi-zone-spread).
	MultiZoneSpread []string `json:"multiZoneSpread,omitempty"`
	// Konnectivity gives components the konnectivity proxy sidecars through which they reach
	// the guest's network (konnectivity-proxy); needs Images[ImageControlPlaneOperator].
	Konnectivity []KonnectivityProxy `json:"konnectivity,omitempty"`
	// AvailabilityProber names the components whose pods wait, in an availability-prober
	// init container, until the guest API server is ready (availability-prober); needs
	// Images[ImageAvailabilityProber].
	AvailabilityProber []string `json:"availabilityProber,omitempty"`
	// AuditLogs names the components whose audit log file (--audit-log-path) an audit-logs
	// sidecar prints to the pod's log, as HyperShift's API servers' and OAuth server's do
	// (audit-logs); needs Images[ImageCLI].
	AuditLogs []string `json:"auditLogs,omitempty"`
}

// Names of the release payload's images the injected containers run.
const (
	// ImageControlPlaneOperator runs the konnectivity proxies and the availability prober.
	ImageControlPlaneOperator = "controlplane-operator"
	// ImageAvailabilityProber runs the availability prober.
	ImageAvailabilityProber = "availability-prober"
)

// Labels and annotations of request-serving components.
const (
	// LabelRequestServingComponent labels the pods of a component that serves requests.
	LabelRequestServingComponent = "hypershift.openshift.io/request-serving-component"
	// AnnotationTopology is the HostedControlPlane annotation naming its topology.
	AnnotationTopology = "hypershift.openshift.io/topology"
	// TopologyDedicatedRequestServing is the topology whose request-serving components run
	// on nodes of their own.
	TopologyDedicatedRequestServing = "dedicated-request-serving-components"
	// AnnotationRequestServingNodeSelector is the HostedControlPlane annotation adding
	// "key=value,..." to the node selection of request-serving components under that topology.
	AnnotationRequestServingNodeSelector = "hypershift.openshift.io/request-serving-node-additional-selector"
)

// Validate checks the options at p, as a configuration field.
func (o ComponentOptions) Validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(o.Images)) {
		if k == "" || o.Images[k] == "" {
			errs = append(errs, field.Invalid(p.Child("images").Key(k), o.Images[k], "an image name and a pull spec are required"))
		}
	}
	for _, l := range []struct {
		name  string
		names []string
	}{{"requestServing", o.RequestServing}, {"multiZoneSpread", o.MultiZoneSpread}, {"availabilityProber", o.AvailabilityProber}, {"auditLogs", o.AuditLogs}} {
		for i, n := range l.names {
			if n == "" {
				errs = append(errs, field.Required(p.Child(l.name).Index(i), "a workload's standalone name"))
			} else if slices.Contains(l.names[:i], n) {
				errs = append(errs, field.Duplicate(p.Child(l.name).Index(i), n))
			}
		}
	}
	if len(o.AvailabilityProber) > 0 && o.Images[ImageAvailabilityProber] == "" {
		errs = append(errs, field.Required(p.Child("images").Key(ImageAvailabilityProber), "the availability prober's image"))
	}
	if len(o.AuditLogs) > 0 && o.Images[ImageCLI] == "" {
		errs = append(errs, field.Required(p.Child("images").Key(ImageCLI), "the audit-logs sidecar's image"))
	}
	seen := map[string]bool{}
	for i, k := range o.Konnectivity {
		kp := p.Child("konnectivity").Index(i)
		if k.Workload == "" {
			errs = append(errs, field.Required(kp.Child("workload"), "a workload's standalone name"))
		} else if seen[k.Workload] {
			errs = append(errs, field.Duplicate(kp.Child("workload"), k.Workload))
		}
		seen[k.Workload] = true
		if len(k.ProxyEnv.PlatformNoProxy) > 0 && len(k.ProxyEnv.NoProxy) == 0 {
			errs = append(errs, field.Required(kp.Child("proxyEnv", "noProxy"), "platformNoProxy adds to noProxy"))
		}
		if !slices.Contains([]KonnectivityMode{KonnectivityHTTPS, KonnectivitySOCKS5, KonnectivityDual}, k.Mode) {
			errs = append(errs, field.NotSupported(kp.Child("mode"), k.Mode, []KonnectivityMode{KonnectivityHTTPS, KonnectivitySOCKS5, KonnectivityDual}))
		}
		for _, port := range []struct {
			name string
			v    int32
		}{{"https", k.HTTPS.ServingPort}, {"socks5", k.SOCKS5.ServingPort}} {
			if port.v < 0 || port.v > 65535 {
				errs = append(errs, field.Invalid(kp.Child(port.name, "servingPort"), port.v, "not a port"))
			}
		}
	}
	if len(o.Konnectivity) > 0 && o.Images[ImageControlPlaneOperator] == "" {
		errs = append(errs, field.Required(p.Child("images").Key(ImageControlPlaneOperator), "the konnectivity proxies' image"))
	}
	return errs
}

// requestServing reports whether the component serves requests.
func (o ComponentOptions) requestServing(component string) bool {
	return slices.Contains(o.RequestServing, component)
}

// componentInjections returns the opinions of HyperShift's component framework that change a
// pod's containers as the ComponentOptions say, for one workload resource, in HyperShift's
// order: the payload's images, the konnectivity sidecars (with what they take of h, the
// HostedControlPlane, when known: konnectivityHCP), the availability prober, the audit-logs
// sidecar (none when h's audit profile is None: the server logs nothing, and HyperShift
// removes the sidecar then).
// guestServer is the guest API server's address as the pods of the HCP namespace reach it.
func componentInjections(resource string, o ComponentOptions, guestServer string, h *HostedControlPlane) []transform.Transform {
	var out []transform.Transform
	if len(o.Images) > 0 {
		out = append(out, podSpecOpinion("images-from-payload", resource, func(spec *yaml.RNode, _ string) error {
			return imagesFromPayload(spec, o.Images)
		}))
	}
	for _, k := range o.Konnectivity {
		inject := func(hcpNamespace string) transform.Transform {
			return specOpinion("konnectivity-proxy", resource, k.Workload, func(_, spec *yaml.RNode, _ string) error {
				if spec == nil {
					return nil
				}
				platform := ""
				if h != nil {
					platform = h.Platform
				}
				return injectKonnectivity(spec, k, o.Images[ImageControlPlaneOperator], hcpNamespace, platform)
			})
		}
		t := inject("")
		t.Filter = func(c transform.Context) (kio.Filter, error) { return inject(c.HCPNamespace).Filter(c) }
		out = append(out, t)
		out = append(out, konnectivityHCP(resource, k, h)...)
	}
	for _, component := range o.AvailabilityProber {
		out = append(out, specOpinion("availability-prober", resource, component, func(_, spec *yaml.RNode, _ string) error {
			if spec == nil {
				return nil
			}
			return injectAvailabilityProber(spec, o.Images[ImageAvailabilityProber], strings.TrimSuffix(guestServer, "/")+"/readyz")
		}))
	}
	if h == nil || h.AuditProfile != auditProfileNone {
		for _, component := range o.AuditLogs {
			out = append(out, specOpinion("audit-logs", resource, component, func(_, spec *yaml.RNode, _ string) error {
				if spec == nil {
					return nil
				}
				return injectAuditLogs(spec, o.Images[ImageCLI])
			}))
		}
	}
	return out
}

// imagesFromPayload replaces every container's and init container's image that names a key
// of images with its pull spec (HyperShift's replaceContainersImageFromPayload).
func imagesFromPayload(spec *yaml.RNode, images map[string]string) error {
	for _, list := range []string{"initContainers", "containers"} {
		containers, err := elements(spec, list)
		if err != nil {
			return err
		}
		for _, c := range containers {
			f := c.Field("image")
			if f == nil {
				continue
			}
			pullSpec, ok := images[yaml.GetValue(f.Value)]
			if !ok {
				continue
			}
			if err := c.PipeE(yaml.SetField("image", yaml.NewStringRNode(pullSpec))); err != nil {
				return fmt.Errorf("%s %q: image: %w", list, name(c), err)
			}
		}
	}
	return nil
}

// restrictedContainerSecurityContext is what Pod Security "restricted" needs of a container
// the profile adds, the pod's own securityContext aside.
func restrictedContainerSecurityContext() map[string]any {
	return map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}}
}

// injectAvailabilityProber makes an availability-prober the pod's first init container,
// waiting until target answers (HyperShift's podspec.AvailabilityProber).
func injectAvailabilityProber(spec *yaml.RNode, image, target string) error {
	return upsertElement(spec, "initContainers", map[string]any{
		"name":            "availability-prober",
		"image":           image,
		"imagePullPolicy": "IfNotPresent",
		"command":         []any{"/usr/bin/control-plane-operator", "availability-prober", "--target", target},
		"securityContext": restrictedContainerSecurityContext(),
	}, true)
}

// upsertElement replaces the element of the list field of spec with the name of elem, or
// adds it: first when first, else last.
func upsertElement(spec *yaml.RNode, list string, elem map[string]any, first bool) error {
	n, err := yaml.FromMap(elem)
	if err != nil {
		return err
	}
	l, err := spec.Pipe(yaml.LookupCreate(yaml.SequenceNode, list))
	if err != nil {
		return err
	}
	key := elem["name"].(string)
	for i, e := range l.Content() {
		if name(yaml.NewRNode(e)) == key {
			l.YNode().Content[i] = n.YNode()
			return nil
		}
	}
	if first {
		l.YNode().Content = append([]*yaml.Node{n.YNode()}, l.YNode().Content...)
		return nil
	}
	return l.PipeE(yaml.Append(n.YNode()))
}
