package hosted

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/transform"
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
	// is left as the operator wrote it. "$(HCP_NAMESPACE)" in a host stands for the
	// namespace of the hosted control plane the workload lands in, so that one configuration
	// names a Service's in-cluster host in every HostedControlPlane
	// ("oauth-openshift.$(HCP_NAMESPACE).svc.cluster.local").
	NoProxy []string `json:"noProxy,omitempty"`
	// PlatformNoProxy adds hosts to NoProxy on the HostedControlPlane's platform (its
	// spec.platform.type), as HyperShift's OAuth server bypasses the proxies for IBM Cloud's
	// identity service there: {IBMCloud: [iam.cloud.ibm.com]}. Needs NoProxy.
	PlatformNoProxy map[string][]string `json:"platformNoProxy,omitempty"`
}

// injectKonnectivity adds the konnectivity proxy sidecars of k to a pod spec, their volumes
// when the pod has none of those names, and the proxy environment of k's containers (HyperShift's
// injectKonnectivityContainer, with the environment its components' manifests set). A sidecar
// of the same name is replaced.
func injectKonnectivity(spec *yaml.RNode, k KonnectivityProxy, image, hcpNamespace, platform string) error {
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
		n, err := yaml.FromMap(v)
		if err != nil {
			return err
		}
		if _, err := appendUnlessMatched(spec, "volumes", "name", v["name"].(string), n); err != nil {
			return err
		}
	}
	return proxyEnv(spec, k, hcpNamespace, platform)
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
// replaced where the container has it, else appended. hcpNamespace replaces
// transform.HCPNamespaceVariable in NO_PROXY; platform (the HostedControlPlane's, "" unknown) picks the
// PlatformNoProxy hosts.
func proxyEnv(spec *yaml.RNode, k KonnectivityProxy, hcpNamespace, platform string) error {
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
		hosts := append(slices.Clone(k.ProxyEnv.NoProxy), k.ProxyEnv.PlatformNoProxy[platform]...)
		noProxy := strings.ReplaceAll(strings.Join(hosts, ","), transform.HCPNamespaceVariable, hcpNamespace)
		vars = append(vars, env{"NO_PROXY", noProxy})
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
