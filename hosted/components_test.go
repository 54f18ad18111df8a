package hosted_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate/scope"
	"github.com/topolayer/topolayer/routing"
)

// oauthServerComponents is what HyperShift's own oauth-openshift component declares (request
// serving, multi-zone spread, both konnectivity proxies with the proxy environment bypassing
// noProxy, the availability prober); the payload images are the caller's to add.
func oauthServerComponents(noProxy ...string) hosted.ComponentOptions {
	yes := true
	return hosted.ComponentOptions{
		RequestServing:  []string{"oauth-openshift"},
		MultiZoneSpread: []string{"oauth-openshift"},
		Konnectivity: []hosted.KonnectivityProxy{{
			Workload: "oauth-openshift", Mode: hosted.KonnectivityDual,
			HTTPS:    hosted.KonnectivityHTTPSOptions{ServingPort: 8092, ConnectDirectlyToCloudAPIs: &yes},
			SOCKS5:   hosted.KonnectivitySOCKS5Options{ResolveFromGuestClusterDNS: &yes, ResolveFromManagementClusterDNS: &yes},
			ProxyEnv: hosted.ProxyEnv{Containers: []string{"oauth-openshift"}, NoProxy: noProxy},
		}},
		AvailabilityProber: []string{"oauth-openshift"},
	}
}

// TestComponentOptionsOnTheRealOAuthServer: the real CAO's oauth-openshift, placed with what
// HyperShift's own oauth-openshift component declares (request serving, multi-zone spread,
// both konnectivity proxies, the availability prober, payload images) and the
// HostedControlPlane, gets HyperShift's sidecars (with the HCP's trust bundles, when it has
// them), init container, labels and affinity, and is
// still admitted: Pod Security "restricted" (the sidecars and the prober included) and the
// profile's containment, with no scope-check warning.
func TestComponentOptionsOnTheRealOAuthServer(t *testing.T) {
	c := caoCase(t, "oauth-server-creation-minimal")
	for _, tc := range []struct {
		name     string
		platform string
		zone     string // where the zone spread is: required or preferred
		spec     string // more of the HCP's spec
	}{
		{"AWS", "AWS", "required", ""},
		{"KubeVirt", "KubeVirt", "preferred", ""},
		{"AWS with the guest's proxy and trust bundles", "AWS", "required", `
additionalTrustBundle: {name: user-ca-bundle}
configuration: {proxy: {httpsProxy: "https://proxy:3129", trustedCA: {name: proxy-ca}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loadConfig(t)
			cfg.Topology.Hosted.HyperShift = oauthServerComponents("kube-apiserver")
			cfg.Topology.Hosted.HyperShift.Images = map[string]string{
				hosted.ImageControlPlaneOperator: "quay.io/cpo@sha256:1", hosted.ImageAvailabilityProber: "quay.io/prober@sha256:2",
			}
			h, err := parseHCP(t, "platform: {type: "+tc.platform+"}"+tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			var d appsv1.Deployment
			for _, e := range planCaseWithHCP(t, c, cfg, h).Entries {
				if e.Source.Resource != "deployments" {
					continue
				}
				if e.Disposition != routing.Apply {
					t.Fatalf("%s: %s by %s: %s", e.Source, e.Disposition, e.Rule, e.Reason)
				}
				for _, w := range e.Warnings {
					if strings.HasPrefix(w, scope.RuleCheck) {
						t.Errorf("%s: %s", e.Source, w)
					}
				}
				for _, want := range []string{"hypershift/konnectivity-proxy", "hypershift/availability-prober", "hypershift/request-serving", "hypershift/multi-zone-spread", "hypershift/colocation", "hypershift/control-plane-node-affinity"} {
					if !slices.Contains(e.Transforms, want) {
						t.Errorf("%s: transforms %v lack %s", e.Source, e.Transforms, want)
					}
				}
				for _, name := range []string{"hypershift/konnectivity-hcp-proxy", "hypershift/konnectivity-hcp-trust-bundles"} {
					if got, want := slices.Contains(e.Transforms, name), tc.spec != ""; got != want {
						t.Errorf("%s: transforms %v: %s there %t, want %t", e.Source, e.Transforms, name, got, want)
					}
				}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.Object.Object, &d); err != nil {
					t.Fatal(err)
				}
			}
			pod := d.Spec.Template
			if pod.Labels[hosted.LabelRequestServingComponent] != "true" {
				t.Errorf("pod labels %v lack %s", pod.Labels, hosted.LabelRequestServingComponent)
			}
			names := func(cs []corev1.Container) []string {
				var out []string
				for _, c := range cs {
					out = append(out, c.Name)
				}
				return out
			}
			if got := names(pod.Spec.Containers); !slices.Contains(got, "konnectivity-proxy-https") || !slices.Contains(got, "konnectivity-proxy-socks5") {
				t.Errorf("containers %v lack the konnectivity proxies", got)
			}
			if got := names(pod.Spec.InitContainers); len(got) == 0 || got[0] != "availability-prober" {
				t.Errorf("init containers %v do not start with the availability prober", got)
			}
			for _, ctr := range append(slices.Clone(pod.Spec.Containers), pod.Spec.InitContainers...) {
				sc := ctr.SecurityContext
				if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
					t.Errorf("container %s is not restricted: %+v", ctr.Name, sc)
				}
				if ctr.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
					t.Errorf("container %s: terminationMessagePolicy %q", ctr.Name, ctr.TerminationMessagePolicy)
				}
			}
			for _, ctr := range pod.Spec.Containers {
				var trusted []string
				for _, m := range ctr.VolumeMounts {
					if m.Name == hosted.KonnectivityTrustBundleVolume {
						trusted = append(trusted, m.MountPath)
					}
				}
				var want []string
				if tc.spec != "" && strings.HasPrefix(ctr.Name, "konnectivity-proxy-") {
					want = []string{"/etc/pki/tls/certs/additional-ca-bundle.pem", "/etc/pki/tls/certs/proxy-trusted-ca.pem"}
				}
				if !slices.Equal(trusted, want) {
					t.Errorf("container %s mounts the trust bundles at %v, want %v", ctr.Name, trusted, want)
				}
				if ctr.SecurityContext.ReadOnlyRootFilesystem == nil || !*ctr.SecurityContext.ReadOnlyRootFilesystem {
					t.Errorf("container %s: root filesystem not read-only", ctr.Name)
				}
			}
			anti := pod.Spec.Affinity.PodAntiAffinity
			var keys []string
			for _, term := range anti.RequiredDuringSchedulingIgnoredDuringExecution {
				keys = append(keys, term.TopologyKey)
				if !slices.Equal(slices.Sorted(maps.Keys(term.LabelSelector.MatchLabels)), slices.Sorted(maps.Keys(pod.Labels))) {
					t.Errorf("anti-affinity by %s selects %v, not the pod's labels %v", term.TopologyKey, term.LabelSelector.MatchLabels, pod.Labels)
				}
			}
			for _, term := range anti.PreferredDuringSchedulingIgnoredDuringExecution {
				keys = append(keys, "preferred:"+term.PodAffinityTerm.TopologyKey)
			}
			want := []string{"topology.kubernetes.io/zone", "kubernetes.io/hostname"}
			if tc.zone == "preferred" {
				want = []string{"kubernetes.io/hostname", "preferred:topology.kubernetes.io/zone"}
			}
			if !slices.Equal(keys, want) {
				t.Errorf("anti-affinity by %v, want %v", keys, want)
			}
		})
	}
}
