package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"

	"github.com/topolayer/topolayer/config"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/mom/manager"
)

// clusterProxy is what a cluster's network operator makes of a Proxy with a trusted CA:
// the status the resident operator's Deployment takes its proxy variables from.
type clusterProxy struct {
	httpProxy, httpsProxy, noProxy string
}

// setClusterProxy sets the cluster Proxy of the cluster cfg names: its trusted CA (the
// ConfigMap openshift-config/user-ca-bundle, holding ca) and the status a network operator
// computes. The Proxy is put back as the example seeds it (no proxy) when the test ends.
func setClusterProxy(t *testing.T, cfg *rest.Config, p clusterProxy, ca []byte) {
	t.Helper()
	cs, dyn := clients(t, cfg)
	proxies := dyn.Resource(schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "proxies"})
	if ca != nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-ca-bundle", Namespace: "openshift-config"}, Data: map[string]string{"ca-bundle.crt": string(ca)}}
		if _, err := cs.CoreV1().ConfigMaps("openshift-config").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().ConfigMaps("openshift-config").Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
		})
		if _, err := proxies.Patch(t.Context(), "cluster", types.MergePatchType, []byte(`{"spec":{"httpsProxy":"`+p.httpsProxy+`","trustedCA":{"name":"user-ca-bundle"}}}`), metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
			t.Fatal(err)
		}
	}
	status := `{"status":{"httpProxy":"` + p.httpProxy + `","httpsProxy":"` + p.httpsProxy + `","noProxy":"` + p.noProxy + `"}}`
	if _, err := proxies.Patch(t.Context(), "cluster", types.MergePatchType, []byte(status), metav1.PatchOptions{FieldManager: "network-operator"}, "status"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = proxies.Patch(ctx, "cluster", types.MergePatchType, []byte(`{"status":null}`), metav1.PatchOptions{FieldManager: "network-operator"}, "status")
		_, _ = proxies.Patch(ctx, "cluster", types.MergePatchType, []byte(`{"spec":{"httpsProxy":null,"trustedCA":null}}`), metav1.PatchOptions{FieldManager: "cluster-admin"})
	})
}

// oauthServerEnv is the environment of the oauth-openshift container of a Deployment.
func oauthServerEnv(d *appsv1.Deployment) map[string]string {
	env := map[string]string{}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "oauth-openshift" {
			continue
		}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
	}
	return env
}

// proxyInOperand reports whether a placed oauth-openshift Deployment carries the proxy px.
type proxyInOperand func(d *appsv1.Deployment, px clusterProxy) bool

// proxyInEnv is proxyInOperand on a standalone cluster, as the resident operator's operand
// gets it: the OAuth server's own environment holds the Proxy's variables.
func proxyInEnv(d *appsv1.Deployment, px clusterProxy) bool {
	got := oauthServerEnv(d)
	return got["HTTP_PROXY"] == px.httpProxy && got["HTTPS_PROXY"] == px.httpsProxy && got["NO_PROXY"] == px.noProxy
}

// proxyInKonnectivity is proxyInOperand in a hosted control plane, as HyperShift's
// oauth-openshift gets it (the shipped hosted example's konnectivity): the OAuth server's
// environment points at its konnectivity sidecars, the HTTPS sidecar carries the hosted
// cluster's proxy (from the HostedControlPlane), and its trust bundle projects the proxy's
// trusted CA ConfigMap of the HCP namespace.
func proxyInKonnectivity(d *appsv1.Deployment, px clusterProxy) bool {
	env := oauthServerEnv(d)
	if env["HTTPS_PROXY"] != "http://127.0.0.1:8092" || env["HTTP_PROXY"] != "http://127.0.0.1:8092" || env["ALL_PROXY"] != "socks5://127.0.0.1:8090" {
		return false
	}
	var args []string
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "konnectivity-proxy-https" {
			args = c.Args
		}
	}
	i := slices.Index(args, "--https-proxy")
	j := slices.Index(args, "--http-proxy")
	if i < 0 || i+1 >= len(args) || args[i+1] != px.httpsProxy || j < 0 || j+1 >= len(args) || args[j+1] != px.httpProxy {
		return false
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name != "proxy-additional-trust-bundle" || v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ConfigMap != nil && src.ConfigMap.Name == hcpTrustedCA {
				return true
			}
		}
	}
	return false
}

// hcpTrustedCA is the ConfigMap of the HCP namespace that holds the hosted cluster's proxy
// CA, as HyperShift copies the HostedCluster's there.
const hcpTrustedCA = "user-ca-bundle"

// setHCPProxy sets the proxy of the HostedControlPlane ns/name, as HyperShift copies the
// HostedCluster's configuration into it, with its trusted CA (when ca is not nil) in the
// ConfigMap hcpTrustedCA of the HCP namespace.
func setHCPProxy(t *testing.T, cfg *rest.Config, ns, name string, p clusterProxy, ca []byte) {
	t.Helper()
	cs, dyn := clients(t, cfg)
	if ca != nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: hcpTrustedCA, Namespace: ns}, Data: map[string]string{"ca-bundle.crt": string(ca)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{FieldManager: "control-plane-operator"}); err != nil {
			t.Fatal(err)
		}
	}
	patch := `{"spec":{"configuration":{"proxy":{"httpProxy":"` + p.httpProxy + `","httpsProxy":"` + p.httpsProxy + `","noProxy":"` + p.noProxy + `","trustedCA":{"name":"` + hcpTrustedCA + `"}}}}}`
	if _, err := dyn.Resource(hypershift.HostedControlPlaneGVR()).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "hypershift-operator"}); err != nil {
		t.Fatal(err)
	}
}

// checkProxyReachesOperand runs the checks of TestRealCAOProxy once the manager p runs: the
// runs' environment took the Proxy and its CA (the status record names them, the last
// run's directory holds the CA CAO was given), the oauth-openshift Deployment carries the
// proxy (in), and a change of the proxy (setProxy) runs CAO again and reaches the Deployment.
func checkProxyReachesOperand(t *testing.T, p *runProcess, cs kubernetes.Interface, statusNS, deployNS, deployName string, in proxyInOperand, setProxy func(clusterProxy), first clusterProxy, ca []byte) {
	t.Helper()
	const op = "cluster-authentication-operator"
	deployed := func(px clusterProxy) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			d, err := cs.AppsV1().Deployments(deployNS).Get(ctx, deployName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return in(d, px), nil
		}
	}
	start := time.Now()
	eventuallyWithin(t, "the proxy in the oauth-openshift Deployment", 3*time.Minute, deployed(first))
	t.Logf("the Proxy reached the oauth-openshift Deployment in %s", time.Since(start).Round(time.Second))
	// The run's environment: the status record names the variables (never their values), the
	// last run's directory holds the CA file SSL_CERT_DIR pointed at.
	settle(t, p, op)
	var y string
	if err := poll(t.Context(), 200*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		st, err := cs.CoreV1().ConfigMaps(statusNS).Get(ctx, manager.StatusName(op), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		y = st.Data["status.yaml"]
		return strings.Contains(y, "envFromInputs:\n- HTTPS_PROXY\n- HTTP_PROXY\n- NO_PROXY\n- SSL_CERT_DIR\n"), nil
	}); err != nil {
		t.Fatalf("the status record does not name the variables taken from the inputs (%v):\n%s", err, y)
	}
	if strings.Contains(y, first.httpsProxy) {
		t.Errorf("the status record shows the proxy's value:\n%s", y)
	}
	held, err := os.ReadFile(filepath.Join(p.workDir(t), op, manager.LastSucceeded, "env", "SSL_CERT_DIR.d", "value"))
	if err != nil || string(held) != string(ca) {
		t.Errorf("the trusted CA of the last run: %q, %v; want the Proxy's trusted CA", held, err)
	}
	// A new proxy: an input change, so CAO runs again and the Deployment follows.
	before := p.runs(t, op)
	second := clusterProxy{httpProxy: first.httpProxy, httpsProxy: "https://proxy2.corp.example:3129", noProxy: first.noProxy}
	setProxy(second)
	eventuallyWithin(t, "the new proxy in the oauth-openshift Deployment", 2*time.Minute, deployed(second))
	// A run is counted once it ended: after its apply.
	if after := settle(t, p, op)[op]; after[manager.TriggerChange] <= before[manager.TriggerChange] {
		t.Errorf("no run triggered by the change of the Proxy: runs before %v, after %v", before, after)
	}
}

// TestRealCAOProxy runs the real cluster-authentication-operator, unmodified, through the
// shipped hosted example with a proxy and its trusted CA set on the hosted cluster, as
// HyperShift sets them: in the HostedControlPlane's configuration (its trusted CA a
// ConfigMap of the HCP namespace) and on the guest's Proxy. The example's envFromInputs give
// CAO's runs the guest Proxy's HTTP_PROXY, HTTPS_PROXY and NO_PROXY and its CA
// (SSL_CERT_DIR), as the resident operator's Deployment receives them. The oauth-openshift
// Deployment placed in the HCP namespace reaches the proxy as HyperShift's does: through its
// konnectivity HTTPS sidecar, which carries the proxy and trusts its CA. A change of the
// proxy reaches it.
func TestRealCAOProxy(t *testing.T) {
	h := setUpCAOHosted(t, "cao-proxy", nil)
	hcpNS, cfgFile, mgmt, guest := h.hcpNS, h.cfgFile, h.mgmt, h.guest
	ca, _, err := cert.GenerateSelfSignedCertKey("proxy.corp.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := clusterProxy{httpProxy: "http://proxy.corp.example:3128", httpsProxy: "https://proxy.corp.example:3129", noProxy: ".cluster.local,.svc,10.0.0.0/16"}
	setClusterProxy(t, guest, first, ca)
	setHCPProxy(t, mgmt, hcpNS, h.hcp, first, ca)

	kubeDir := writeKubeconfigs(t, hosted)
	p := startRun(t, append([]string{"--config", cfgFile, "--leader-elect=false", "-v", "1"}, hostedKubeconfigFlags(kubeDir)...)...)
	mgmtCS, _ := clients(t, mgmt)
	checkProxyReachesOperand(t, p, mgmtCS, hcpNS, hcpNS, "openshift-authentication--oauth-openshift", proxyInKonnectivity, func(px clusterProxy) {
		setClusterProxy(t, guest, px, nil)
		setHCPProxy(t, mgmt, hcpNS, h.hcp, px, nil)
	}, first, ca)
}

// TestRealCAOProxyStandalone is TestRealCAOProxy on one standalone cluster where the
// resident operator ran before (as TestRealCAOStandalone seeds it), with the cluster's own
// Proxy: the Deployment is the resident operator's oauth-openshift, adopted.
func TestRealCAOProxyStandalone(t *testing.T) {
	bin := caoBinary(t)
	if os.Getenv(corpus.EnvVar) == "" {
		t.Skipf("%s is not set: no CAO corpus for the resident operator's objects", corpus.EnvVar)
	}
	rc := standalone.Config(cluster.Single)
	statusNS := newNamespace(t, rc)
	cfgFile := configWith(t, filepath.Join("cluster-authentication-operator", "standalone.yaml"), func(cfg *config.TopologyConfig) {
		cfg.Operators[0].Command = []string{bin}
		cfg.Manager.Namespace = statusNS
	})
	seedStandaloneCAO(t, rc)
	ca, _, err := cert.GenerateSelfSignedCertKey("proxy.corp.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := clusterProxy{httpProxy: "http://proxy.corp.example:3128", httpsProxy: "https://proxy.corp.example:3129", noProxy: ".cluster.local,.svc,10.0.0.0/16"}
	setClusterProxy(t, rc, first, ca)

	kubeDir := writeKubeconfigs(t, standalone)
	p := startRun(t, "--config", cfgFile, "--leader-elect=false", "-v", "1", "--kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Single))
	cs, _ := clients(t, rc)
	checkProxyReachesOperand(t, p, cs, statusNS, "openshift-authentication", "oauth-openshift", proxyInEnv, func(px clusterProxy) { setClusterProxy(t, rc, px, nil) }, first, ca)
}
