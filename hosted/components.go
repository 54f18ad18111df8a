package hosted

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/transform"
)

// ComponentOptions are what HyperShift's control-plane components declare of themselves and
// topolayer cannot read in an operator's output: the release payload's images, and, by the
// workload's standalone name (its component), whether it serves requests, spreads across
// zones, and gets the konnectivity sidecars and the availability prober. The zero value
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

// KonnectivityMode says which konnectivity proxies a component gets.
type KonnectivityMode string

// Konnectivity modes.
const (
	KonnectivityHTTPS  KonnectivityMode = "HTTPS"
	KonnectivitySOCKS5 KonnectivityMode = "SOCKS5"
	KonnectivityDual   KonnectivityMode = "Dual"
)

// The names HyperShift gives the konnectivity sidecars' volumes and the objects of the HCP
// namespace they mount, which the management cluster provides.
const (
	// KonnectivityKubeconfigVolume is the pod's volume holding the kubeconfig the proxies
	// read; added, from KonnectivityProxy.KubeconfigSecret, when the pod has none.
	KonnectivityKubeconfigVolume = "kubeconfig"
	// DefaultKonnectivityKubeconfigSecret is HyperShift's Secret of that kubeconfig.
	DefaultKonnectivityKubeconfigSecret = "service-network-admin-kubeconfig"
	// KonnectivityClientSecret is the Secret of the proxies' client certificate.
	KonnectivityClientSecret = "konnectivity-client"
	// KonnectivityCAConfigMap is the ConfigMap of the konnectivity server's CA bundle.
	KonnectivityCAConfigMap = "konnectivity-ca-bundle"
	// konnectivityDefaultPort is the port both proxies serve on by default.
	konnectivityDefaultPort = 8090
)

// KonnectivityProxy gives one component's pods the konnectivity proxy sidecars, as
// HyperShift's InjectKonnectivityContainer does, and points its containers at them.
type KonnectivityProxy struct {
	// Workload is the component: the workload's standalone name.
	Workload string `json:"workload"`
	// Mode is HTTPS, SOCKS5 or Dual (both sidecars).
	Mode KonnectivityMode `json:"mode"`
	// HTTPS configures the HTTPS proxy.
	HTTPS KonnectivityHTTPSOptions `json:"https,omitzero"`
	// SOCKS5 configures the SOCKS5 proxy.
	SOCKS5 KonnectivitySOCKS5Options `json:"socks5,omitzero"`
	// KubeconfigSecret is the Secret of the HCP namespace whose kubeconfig the proxies read,
	// mounted as the volume "kubeconfig" when the pod has none. Default
	// service-network-admin-kubeconfig.
	KubeconfigSecret string `json:"kubeconfigSecret,omitempty"`
	// ProxyEnv names the containers that reach the guest's network through the proxies.
	ProxyEnv ProxyEnv `json:"proxyEnv,omitzero"`
}

// KonnectivityHTTPSOptions are the HTTPS proxy's flags; unset ones are not passed.
type KonnectivityHTTPSOptions struct {
	// ServingPort is the port it serves on (--serving-port; the proxy's default 8090).
	ServingPort int32 `json:"servingPort,omitempty"`
	// ConnectDirectlyToCloudAPIs lets requests to cloud APIs bypass konnectivity.
	ConnectDirectlyToCloudAPIs *bool `json:"connectDirectlyToCloudAPIs,omitempty"`
}

// KonnectivitySOCKS5Options are the SOCKS5 proxy's flags; unset ones are not passed.
type KonnectivitySOCKS5Options struct {
	// ServingPort is the port it serves on (--serving-port; the proxy's default 8090).
	ServingPort int32 `json:"servingPort,omitempty"`
	// ConnectDirectlyToCloudAPIs lets requests to cloud APIs bypass konnectivity.
	ConnectDirectlyToCloudAPIs *bool `json:"connectDirectlyToCloudAPIs,omitempty"`
	// ResolveFromGuestClusterDNS resolves names with the guest's DNS.
	ResolveFromGuestClusterDNS *bool `json:"resolveFromGuestClusterDNS,omitempty"`
	// ResolveFromManagementClusterDNS falls back to the management cluster's DNS until
	// the tunnel is up.
	ResolveFromManagementClusterDNS *bool `json:"resolveFromManagementClusterDNS,omitempty"`
	// DisableResolver resolves no names.
	DisableResolver *bool `json:"disableResolver,omitempty"`
}

// ProxyEnv sets the proxy environment of some of a component's containers: HTTP_PROXY and
// HTTPS_PROXY name the HTTPS proxy, ALL_PROXY the SOCKS5 proxy, NO_PROXY what bypasses them.
type ProxyEnv struct {
	// Containers are the names of the containers that get it.
	Containers []string `json:"containers,omitempty"`
	// NoProxy are the hosts that bypass the proxies (NO_PROXY, comma-separated); none: NO_PROXY
	// is left as the operator wrote it.
	NoProxy []string `json:"noProxy,omitempty"`
}

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
	}{{"requestServing", o.RequestServing}, {"multiZoneSpread", o.MultiZoneSpread}, {"availabilityProber", o.AvailabilityProber}} {
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
	seen := map[string]bool{}
	for i, k := range o.Konnectivity {
		kp := p.Child("konnectivity").Index(i)
		if k.Workload == "" {
			errs = append(errs, field.Required(kp.Child("workload"), "a workload's standalone name"))
		} else if seen[k.Workload] {
			errs = append(errs, field.Duplicate(kp.Child("workload"), k.Workload))
		}
		seen[k.Workload] = true
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
// HostedControlPlane, when known: konnectivityHCP), the availability prober.
// guestServer is the guest API server's address as the pods of the HCP namespace reach it.
func componentInjections(resource string, o ComponentOptions, guestServer string, h *HostedControlPlane) []transform.Transform {
	var out []transform.Transform
	if len(o.Images) > 0 {
		out = append(out, podSpecOpinion("images-from-payload", resource, func(spec *yaml.RNode, _ string) error {
			return imagesFromPayload(spec, o.Images)
		}))
	}
	for _, k := range o.Konnectivity {
		out = append(out, specOpinion("konnectivity-proxy", resource, k.Workload, func(_, spec *yaml.RNode, _ string) error {
			if spec == nil {
				return nil
			}
			return injectKonnectivity(spec, k, o.Images[ImageControlPlaneOperator])
		}))
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

// injectKonnectivity adds the konnectivity proxy sidecars of k to a pod spec, their volumes
// when the pod has none of those names, and the proxy environment of k's containers (HyperShift's
// injectKonnectivityContainer, with the environment its components' manifests set). A sidecar
// of the same name is replaced.
func injectKonnectivity(spec *yaml.RNode, k KonnectivityProxy, image string) error {
	for _, mode := range k.modes() {
		if err := upsertElement(spec, "containers", konnectivityContainer(k, mode, image), false); err != nil {
			return err
		}
	}
	secret := k.KubeconfigSecret
	if secret == "" {
		secret = DefaultKonnectivityKubeconfigSecret
	}
	for _, v := range []map[string]any{
		{"name": KonnectivityKubeconfigVolume, "secret": map[string]any{"secretName": secret, "defaultMode": SecretVolumeDefaultMode}},
		{"name": "konnectivity-proxy-cert", "secret": map[string]any{"secretName": KonnectivityClientSecret, "defaultMode": SecretVolumeDefaultMode}},
		{"name": "konnectivity-proxy-ca", "configMap": map[string]any{"name": KonnectivityCAConfigMap}},
	} {
		volumes, err := spec.Pipe(yaml.LookupCreate(yaml.SequenceNode, "volumes"))
		if err != nil {
			return err
		}
		if existing, err := volumes.Pipe(yaml.MatchElement("name", v["name"].(string))); err != nil {
			return err
		} else if existing != nil {
			continue
		}
		n, err := yaml.FromMap(v)
		if err != nil {
			return err
		}
		if err := volumes.PipeE(yaml.Append(n.YNode())); err != nil {
			return err
		}
	}
	return proxyEnv(spec, k)
}

// The konnectivity sidecars' names, and what HyperShift mounts in them of the trust bundles
// the HostedControlPlane names.
const (
	// KonnectivityTrustBundleVolume is the projected volume of those trust bundles.
	KonnectivityTrustBundleVolume = "proxy-additional-trust-bundle"
	// konnectivityTrustPath is the directory of the sidecars where each bundle is mounted.
	konnectivityTrustPath = "/etc/pki/tls/certs"
	// trustBundleKey is the key of a trust bundle ConfigMap HyperShift reads.
	trustBundleKey = "ca-bundle.crt"
)

// modes returns the proxy modes of k's sidecars: both for Dual, HTTPS first.
func (k KonnectivityProxy) modes() []KonnectivityMode {
	if k.Mode == KonnectivityDual {
		return []KonnectivityMode{KonnectivityHTTPS, KonnectivitySOCKS5}
	}
	return []KonnectivityMode{k.Mode}
}

// konnectivitySidecar names the sidecar of one proxy mode.
func konnectivitySidecar(mode KonnectivityMode) string {
	return "konnectivity-proxy-" + strings.ToLower(string(mode))
}

// konnectivityHCP returns the opinions that give the konnectivity sidecars of k what
// HyperShift's injectKonnectivityContainer takes of the HostedControlPlane h, each named
// after what it reads, and none when h is nil or sets none of it:
//
//   - konnectivity-hcp-proxy (spec.configuration.proxy; spec.networking and spec.platform
//     for --no-proxy): the HTTPS sidecar forwards through the guest's proxy with
//     --http-proxy, --https-proxy and --no-proxy (HostedControlPlane.DefaultNoProxy), right
//     after "run", as HyperShift passes them;
//   - konnectivity-hcp-trust-bundles (spec.additionalTrustBundle and
//     spec.configuration.proxy.trustedCA): the projected volume
//     KonnectivityTrustBundleVolume of those ConfigMaps' ca-bundle.crt, as
//     additional-ca-bundle.pem and proxy-trusted-ca.pem, each mounted into every sidecar of k
//     under /etc/pki/tls/certs.
//
// Both edit only the sidecars konnectivity-proxy added: without them, they change nothing.
func konnectivityHCP(resource string, k KonnectivityProxy, h *HostedControlPlane) []transform.Transform {
	if h == nil {
		return nil
	}
	var out []transform.Transform
	if h.Proxy != nil && k.Mode != KonnectivitySOCKS5 {
		out = append(out, specOpinion("konnectivity-hcp-proxy", resource, k.Workload, func(_, spec *yaml.RNode, _ string) error {
			if spec == nil {
				return nil
			}
			return konnectivityProxyFlags(spec, h)
		}))
	}
	if bundles := h.konnectivityTrustBundles(); len(bundles) > 0 {
		out = append(out, specOpinion("konnectivity-hcp-trust-bundles", resource, k.Workload, func(_, spec *yaml.RNode, _ string) error {
			if spec == nil {
				return nil
			}
			return mountTrustBundles(spec, k, bundles)
		}))
	}
	return out
}

// trustBundle is one ConfigMap of the HCP namespace whose ca-bundle.crt the konnectivity
// sidecars trust, and the file it becomes.
type trustBundle struct{ configMap, file string }

// konnectivityTrustBundles returns the trust bundles of h, in HyperShift's order: the
// additional trust bundle, then the proxy's trusted CA.
func (h *HostedControlPlane) konnectivityTrustBundles() []trustBundle {
	var out []trustBundle
	if h.AdditionalTrustBundle != "" {
		out = append(out, trustBundle{h.AdditionalTrustBundle, "additional-ca-bundle.pem"})
	}
	if h.Proxy != nil && h.Proxy.TrustedCA != "" {
		out = append(out, trustBundle{h.Proxy.TrustedCA, "proxy-trusted-ca.pem"})
	}
	return out
}

// konnectivityProxyFlags passes the HostedControlPlane's proxy to the HTTPS sidecar of spec,
// right after its first argument ("run").
func konnectivityProxyFlags(spec *yaml.RNode, h *HostedControlPlane) error {
	sidecar, err := spec.Pipe(yaml.Lookup("containers"), yaml.MatchElement("name", konnectivitySidecar(KonnectivityHTTPS)))
	if err != nil || sidecar == nil {
		return err
	}
	args, err := sidecar.Pipe(yaml.LookupCreate(yaml.SequenceNode, "args"))
	if err != nil {
		return fmt.Errorf("container %q: args: %w", konnectivitySidecar(KonnectivityHTTPS), err)
	}
	var flags []*yaml.Node
	for _, v := range []string{"--http-proxy", h.Proxy.HTTPProxy, "--https-proxy", h.Proxy.HTTPSProxy, "--no-proxy", h.DefaultNoProxy()} {
		flags = append(flags, yaml.NewStringRNode(v).YNode())
	}
	content := args.YNode().Content
	at := min(1, len(content))
	args.YNode().Content = slices.Concat(content[:at], flags, content[at:])
	return nil
}

// mountTrustBundles adds the projected volume of bundles to spec, replacing one of its name,
// when spec has a konnectivity sidecar of k, and mounts each bundle into each such sidecar.
func mountTrustBundles(spec *yaml.RNode, k KonnectivityProxy, bundles []trustBundle) error {
	containers, err := elements(spec, "containers")
	if err != nil {
		return err
	}
	var sidecars []string
	for _, mode := range k.modes() {
		sidecars = append(sidecars, konnectivitySidecar(mode))
	}
	mounted := false
	for _, c := range containers {
		if !slices.Contains(sidecars, name(c)) {
			continue
		}
		mounts, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, "volumeMounts"))
		if err != nil {
			return fmt.Errorf("container %q: volumeMounts: %w", name(c), err)
		}
		for _, b := range bundles {
			path := konnectivityTrustPath + "/" + b.file
			mount, err := yaml.FromMap(map[string]any{"name": KonnectivityTrustBundleVolume, "mountPath": path, "subPath": b.file})
			if err != nil {
				return err
			}
			if err := mounts.PipeE(yaml.ElementSetter{Keys: []string{"mountPath"}, Values: []string{path}, Element: mount.YNode()}); err != nil {
				return fmt.Errorf("container %q: volumeMounts %s: %w", name(c), path, err)
			}
		}
		mounted = true
	}
	if !mounted {
		return nil
	}
	var sources []any
	for _, b := range bundles {
		sources = append(sources, map[string]any{"configMap": map[string]any{
			"name": b.configMap, "items": []any{map[string]any{"key": trustBundleKey, "path": b.file}},
		}})
	}
	return upsertElement(spec, "volumes", map[string]any{
		"name":      KonnectivityTrustBundleVolume,
		"projected": map[string]any{"sources": sources, "defaultMode": ConfigMapVolumeDefaultMode},
	}, false)
}

// konnectivityContainer returns the sidecar of one proxy mode.
func konnectivityContainer(k KonnectivityProxy, mode KonnectivityMode, image string) map[string]any {
	args := []any{"run"}
	flag := func(name string, v *bool) {
		if v != nil {
			args = append(args, fmt.Sprintf("--%s=%t", name, *v))
		}
	}
	port := func(p int32) {
		if p != 0 {
			args = append(args, fmt.Sprintf("--serving-port=%d", p))
		}
	}
	command := "konnectivity-https-proxy"
	if mode == KonnectivityHTTPS {
		port(k.HTTPS.ServingPort)
		flag("connect-directly-to-cloud-apis", k.HTTPS.ConnectDirectlyToCloudAPIs)
	} else {
		command = "konnectivity-socks5-proxy"
		port(k.SOCKS5.ServingPort)
		flag("connect-directly-to-cloud-apis", k.SOCKS5.ConnectDirectlyToCloudAPIs)
		flag("resolve-from-guest-cluster-dns", k.SOCKS5.ResolveFromGuestClusterDNS)
		flag("resolve-from-management-cluster-dns", k.SOCKS5.ResolveFromManagementClusterDNS)
		flag("disable-resolver", k.SOCKS5.DisableResolver)
	}
	return map[string]any{
		"name":      konnectivitySidecar(mode),
		"image":     image,
		"command":   []any{"/usr/bin/control-plane-operator", command},
		"args":      args,
		"env":       []any{map[string]any{"name": "KUBECONFIG", "value": "/etc/kubernetes/secrets/kubeconfig/kubeconfig"}},
		"resources": map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "30Mi"}},
		"volumeMounts": []any{
			map[string]any{"name": KonnectivityKubeconfigVolume, "mountPath": "/etc/kubernetes/secrets/kubeconfig"},
			map[string]any{"name": "konnectivity-proxy-cert", "mountPath": "/etc/konnectivity/proxy-client"},
			map[string]any{"name": "konnectivity-proxy-ca", "mountPath": "/etc/konnectivity/proxy-ca"},
		},
		"securityContext": restrictedContainerSecurityContext(),
	}
}

// proxyEnv points the containers k.ProxyEnv names at the proxies of k: each variable is
// replaced where the container has it, else appended.
func proxyEnv(spec *yaml.RNode, k KonnectivityProxy) error {
	portOf := func(p int32) string {
		if p == 0 {
			p = konnectivityDefaultPort
		}
		return strconv.Itoa(int(p))
	}
	type env struct{ name, value string }
	var vars []env
	if k.Mode != KonnectivitySOCKS5 {
		https := "http://127.0.0.1:" + portOf(k.HTTPS.ServingPort)
		vars = append(vars, env{"HTTP_PROXY", https}, env{"HTTPS_PROXY", https})
	}
	if k.Mode != KonnectivityHTTPS {
		vars = append(vars, env{"ALL_PROXY", "socks5://127.0.0.1:" + portOf(k.SOCKS5.ServingPort)})
	}
	if len(k.ProxyEnv.NoProxy) > 0 {
		vars = append(vars, env{"NO_PROXY", strings.Join(k.ProxyEnv.NoProxy, ",")})
	}
	containers, err := elements(spec, "containers")
	if err != nil {
		return err
	}
	for _, c := range containers {
		if !slices.Contains(k.ProxyEnv.Containers, name(c)) {
			continue
		}
		list, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, "env"))
		if err != nil {
			return err
		}
		for _, v := range vars {
			if err := list.PipeE(yaml.ElementSetter{Keys: []string{"name"}, Values: []string{v.name},
				Element: yaml.NewMapRNode(&map[string]string{"name": v.name, "value": v.value}).YNode()}); err != nil {
				return fmt.Errorf("container %q: env %s: %w", name(c), v.name, err)
			}
		}
	}
	return nil
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

// isolation returns the opinions that place a component's pods near its hosted control
// plane (HyperShift's setControlPlaneIsolation and setColocation) and label those that serve
// requests (setLabels): control-plane-node-affinity, colocation, request-serving.
func isolation(resource string, o ComponentOptions, h *HostedControlPlane) []transform.Transform {
	out := []transform.Transform{
		hcpNamespaceOpinion("control-plane-node-affinity", resource, func(spec, _ *yaml.RNode, component, hcpNamespace string) error {
			return nodeAffinity(spec, hcpNamespace, h, o.requestServing(component))
		}),
		hcpNamespaceOpinion("colocation", resource, func(spec, _ *yaml.RNode, _, hcpNamespace string) error {
			terms, err := yaml.FromMap(map[string]any{"t": []any{map[string]any{"weight": 100, "podAffinityTerm": map[string]any{
				"labelSelector": map[string]any{"matchLabels": map[string]any{LabelHostedControlPlane: hcpNamespace}},
				"topologyKey":   "kubernetes.io/hostname",
			}}}})
			if err != nil {
				return err
			}
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
	terms, err := yaml.FromMap(map[string]any{"t": []any{
		map[string]any{"weight": 50, "preference": map[string]any{"matchExpressions": []any{
			map[string]any{"key": TaintControlPlane, "operator": "In", "values": []any{"true"}}}}},
		map[string]any{"weight": 100, "preference": map[string]any{"matchExpressions": []any{
			map[string]any{"key": TaintCluster, "operator": "In", "values": []any{hcpNamespace}}}}},
	}})
	if err != nil {
		return err
	}
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
		path, _ := translate.PodTemplatePath(resource)
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
