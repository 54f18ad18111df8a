package hosted_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
)

// TestKonnectivityTakesTheHCPProxyAndTrustBundles: the konnectivity sidecars take what
// HyperShift's injectKonnectivityContainer takes of the HostedControlPlane: its proxy as the
// HTTPS proxy's flags, right after "run", and its additional trust bundle and proxy CA in a
// projected volume mounted into every sidecar. Each edit is a transform of its own, named
// after what it reads, and none runs without the HCP or without what it reads.
func TestKonnectivityTakesTheHCPProxyAndTrustBundles(t *testing.T) {
	const pod = `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: oauth-openshift}], volumes: [{name: config, configMap: {name: config}}]}}}}`
	yes := true
	dual := hosted.KonnectivityProxy{
		Workload: "oauth-openshift", Mode: hosted.KonnectivityDual,
		HTTPS:  hosted.KonnectivityHTTPSOptions{ServingPort: 8092, ConnectDirectlyToCloudAPIs: &yes},
		SOCKS5: hosted.KonnectivitySOCKS5Options{ResolveFromGuestClusterDNS: &yes},
	}
	socks5 := hosted.KonnectivityProxy{Workload: "oauth-openshift", Mode: hosted.KonnectivitySOCKS5}
	const proxied = `platform: {type: AWS, aws: {region: eu-west-1}}
networking: {machineNetwork: [{cidr: 10.0.0.0/16}], serviceNetwork: [{cidr: 172.30.0.0/16}], clusterNetwork: [{cidr: 10.132.0.0/14}]}
additionalTrustBundle: {name: user-ca-bundle}
configuration: {proxy: {httpProxy: "http://proxy:3128", httpsProxy: "https://proxy:3129", noProxy: "corp.example,,localhost", trustedCA: {name: proxy-ca}}}`
	const noProxy = ".cluster.local,.eu-west-1.compute.internal,.hypershift.local,.svc,10.0.0.0/16,10.132.0.0/14,127.0.0.1,169.254.169.254,172.30.0.0/16,corp.example,localhost"
	https := func(extra string) string {
		return `{name: konnectivity-proxy-https, image: cpo, command: [/usr/bin/control-plane-operator, konnectivity-https-proxy],
     args: [run` + extra + `, --serving-port=8092, --connect-directly-to-cloud-apis=true]`
	}
	const socks5Args = `{name: konnectivity-proxy-socks5, image: cpo, command: [/usr/bin/control-plane-operator, konnectivity-socks5-proxy],
     args: [run, --resolve-from-guest-cluster-dns=true]`
	const rest = `, env: [{name: KUBECONFIG, value: /etc/kubernetes/secrets/kubeconfig/kubeconfig}],
     resources: {requests: {cpu: 10m, memory: 30Mi}}, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}},
     volumeMounts: [{name: kubeconfig, mountPath: /etc/kubernetes/secrets/kubeconfig}, {name: konnectivity-proxy-cert, mountPath: /etc/konnectivity/proxy-client}, {name: konnectivity-proxy-ca, mountPath: /etc/konnectivity/proxy-ca}`
	const volumes = `{name: config, configMap: {name: config}},
    {name: kubeconfig, secret: {secretName: service-network-admin-kubeconfig, defaultMode: 416}},
    {name: konnectivity-proxy-cert, secret: {secretName: konnectivity-client, defaultMode: 416}},
    {name: konnectivity-proxy-ca, configMap: {name: konnectivity-ca-bundle}}`
	const bothMounts = `, {name: proxy-additional-trust-bundle, mountPath: /etc/pki/tls/certs/additional-ca-bundle.pem, subPath: additional-ca-bundle.pem}, {name: proxy-additional-trust-bundle, mountPath: /etc/pki/tls/certs/proxy-trusted-ca.pem, subPath: proxy-trusted-ca.pem}`
	// bothBundles is the projected volume of the additional trust bundle and the proxy's CA.
	const bothBundles = `,
    {name: proxy-additional-trust-bundle, projected: {defaultMode: 420, sources: [
      {configMap: {name: user-ca-bundle, items: [{key: ca-bundle.crt, path: additional-ca-bundle.pem}]}},
      {configMap: {name: proxy-ca, items: [{key: ca-bundle.crt, path: proxy-trusted-ca.pem}]}}]}}`
	// socks5Run is the SOCKS5 sidecar of a SOCKS5-only workload: no flags but "run".
	const socks5Run = `{name: konnectivity-proxy-socks5, image: cpo, command: [/usr/bin/control-plane-operator, konnectivity-socks5-proxy],
     args: [run]`
	for _, tc := range []struct {
		name string
		hcp  string // the HCP's spec; "-" for no HCP
		k    hosted.KonnectivityProxy
		ran  []string // the transforms that select the sidecars' workload, in order
		want string
	}{
		{
			name: "without the HCP, the sidecars alone", hcp: "-", k: dual, ran: []string{"hypershift/konnectivity-proxy"},
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: oauth-openshift}, ` + https("") + rest + `]}, ` + socks5Args + rest + `]}],
  volumes: [` + volumes + `]}}}}`,
		},
		{
			name: "an HCP without proxy or trust bundle adds nothing", hcp: "platform: {type: AWS, aws: {region: us-east-1}}", k: dual, ran: []string{"hypershift/konnectivity-proxy"},
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: oauth-openshift}, ` + https("") + rest + `]}, ` + socks5Args + rest + `]}],
  volumes: [` + volumes + `]}}}}`,
		},
		{
			name: "the proxy's flags on the HTTPS sidecar, both bundles in every sidecar", hcp: proxied, k: dual,
			ran: []string{"hypershift/konnectivity-proxy", "hypershift/konnectivity-hcp-proxy", "hypershift/konnectivity-hcp-trust-bundles"},
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: oauth-openshift}, ` + https(`, --http-proxy, "http://proxy:3128", --https-proxy, "https://proxy:3129", --no-proxy, "`+noProxy+`"`) + rest + bothMounts + `]}, ` + socks5Args + rest + bothMounts + `]}],
  volumes: [` + volumes + bothBundles + `]}}}}`,
		},
		{
			name: "an empty proxy: empty proxies, the default no-proxy list", hcp: "platform: {type: None}\nconfiguration: {proxy: {}}", k: dual,
			ran: []string{"hypershift/konnectivity-proxy", "hypershift/konnectivity-hcp-proxy"},
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: oauth-openshift}, ` + https(`, --http-proxy, "", --https-proxy, "", --no-proxy, ".cluster.local,.hypershift.local,.svc,127.0.0.1,localhost"`) + rest + `]}, ` + socks5Args + rest + `]}],
  volumes: [` + volumes + `]}}}}`,
		},
		{
			name: "a SOCKS5 sidecar takes the bundles, not the proxy", hcp: proxied, k: socks5,
			ran: []string{"hypershift/konnectivity-proxy", "hypershift/konnectivity-hcp-trust-bundles"},
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: oauth-openshift}, ` + socks5Run + rest + bothMounts + `]}],
  volumes: [` + volumes + bothBundles + `]}}}}`,
		},
		{
			name: "the additional trust bundle alone", hcp: "additionalTrustBundle: {name: user-ca-bundle}", k: socks5,
			ran: []string{"hypershift/konnectivity-proxy", "hypershift/konnectivity-hcp-trust-bundles"},
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: oauth-openshift}, ` + socks5Run + rest + `, {name: proxy-additional-trust-bundle, mountPath: /etc/pki/tls/certs/additional-ca-bundle.pem, subPath: additional-ca-bundle.pem}]}],
  volumes: [` + volumes + `,
    {name: proxy-additional-trust-bundle, projected: {defaultMode: 420, sources: [
      {configMap: {name: user-ca-bundle, items: [{key: ca-bundle.crt, path: additional-ca-bundle.pem}]}}]}}]}}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := hosted.ProfileOptions{Components: hosted.ComponentOptions{
				Images: map[string]string{hosted.ImageControlPlaneOperator: "cpo"}, Konnectivity: []hosted.KonnectivityProxy{tc.k},
			}}
			if tc.hcp != "-" {
				h, err := parseHCP(t, tc.hcp, nil)
				if err != nil {
					t.Fatal(err)
				}
				o.HostedControlPlane = h
			}
			id := contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"}
			var ran []string
			obj := pod
			for _, name := range []string{"hypershift/konnectivity-proxy", "hypershift/konnectivity-hcp-proxy", "hypershift/konnectivity-hcp-trust-bundles"} {
				m, n := runOpinion(t, o, name, id, obj)
				if n == 0 {
					continue
				}
				ran = append(ran, name)
				b, err := yaml.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				obj = string(b)
			}
			if diff := cmp.Diff(tc.ran, ran); diff != "" {
				t.Errorf("transforms (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(yamlMap(t, tc.want), yamlMap(t, obj)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultNoProxy: what the konnectivity HTTPS proxy does not forward through the HCP's
// proxy, as HyperShift's proxy.DefaultNoProxy computes it from the HCP.
func TestDefaultNoProxy(t *testing.T) {
	const base = ".cluster.local,.hypershift.local,.svc,127.0.0.1,"
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"no platform, no networks, no proxy", "", base + "localhost"},
		{"AWS in us-east-1", "platform: {type: AWS, aws: {region: us-east-1}}", ".cluster.local,.ec2.internal,.hypershift.local,.svc,127.0.0.1,169.254.169.254,localhost"},
		{"AWS without a region: no node domain", "platform: {type: AWS}", base + "169.254.169.254,localhost"},
		{"Azure's public cloud, by default", "platform: {type: Azure}", base + "169.254.169.254,localhost"},
		{"another Azure cloud: its wire server", "platform: {type: Azure, azure: {cloud: AzureUSGovernmentCloud}}", base + "168.63.129.16,169.254.169.254,localhost"},
		{"KubeVirt: no metadata address", "platform: {type: KubeVirt}", base + "localhost"},
		{
			"networks as HyperShift prints them, the whole machine network left out",
			"networking: {machineNetwork: [{cidr: 0.0.0.0/0}, {cidr: 'fd00:0::/48'}], serviceNetwork: [{cidr: 172.30.0.1/16}], clusterNetwork: [{cidr: 10.128.0.0/14}]}",
			".cluster.local,.hypershift.local,.svc,10.128.0.0/14,127.0.0.1,172.30.0.1/16,fd00::/48,localhost",
		},
		{"the proxy's entries, each once, empty ones left out", "configuration: {proxy: {noProxy: 'b.example,,a.example,.svc'}}", ".cluster.local,.hypershift.local,.svc,127.0.0.1,a.example,b.example,localhost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := parseHCP(t, tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.DefaultNoProxy(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestHCPProxyFields: the proxy, trust bundle and networks are read, a malformed one is an
// error naming its field, and a change of any makes another profile (Equal), so the
// operators run again.
func TestHCPProxyFields(t *testing.T) {
	for _, tc := range []struct {
		name, spec, err string
	}{
		{"a CIDR that does not parse", "networking: {serviceNetwork: [{cidr: 172.30.0.0}]}", "spec.networking.serviceNetwork: [0].cidr: invalid CIDR address"},
		{"a network entry that is no object", "networking: {clusterNetwork: [10.0.0.0/8]}", "spec.networking.clusterNetwork: [0]: string is not an object"},
		{"a proxy that is no object", "configuration: {proxy: http://proxy}", "spec.configuration.proxy"},
		{"a trusted CA name that is no string", "configuration: {proxy: {trustedCA: {name: 1}}}", "spec.configuration.proxy: trustedCA.name"},
		{"a trust bundle name that is no string", "additionalTrustBundle: {name: [a]}", "spec.additionalTrustBundle.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseHCP(t, tc.spec, nil)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
	base := "platform: {type: AWS, aws: {region: us-east-1}}\n"
	plain, err := parseHCP(t, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, change := range []string{
		"configuration: {proxy: {}}",
		"configuration: {proxy: {httpsProxy: 'https://proxy'}}",
		"configuration: {proxy: {trustedCA: {name: proxy-ca}}}",
		"additionalTrustBundle: {name: user-ca-bundle}",
		"networking: {serviceNetwork: [{cidr: 172.30.0.0/16}]}",
	} {
		h, err := parseHCP(t, base+change, nil)
		if err != nil {
			t.Fatalf("%s: %v", change, err)
		}
		if h.Equal(plain) {
			t.Errorf("%s: the profile reads the same", change)
		}
	}
	h, err := parseHCP(t, base+"additionalTrustBundle: {name: user-ca-bundle}\nconfiguration: {proxy: {httpProxy: 'http://p', httpsProxy: 'https://p', noProxy: a, trustedCA: {name: proxy-ca}}}", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&hosted.Proxy{HTTPProxy: "http://p", HTTPSProxy: "https://p", NoProxy: "a", TrustedCA: "proxy-ca"}, h.Proxy); diff != "" || h.AdditionalTrustBundle != "user-ca-bundle" {
		t.Errorf("proxy (-want +got):\n%s; trust bundle %q", diff, h.AdditionalTrustBundle)
	}
}
