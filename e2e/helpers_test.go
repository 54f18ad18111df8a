package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/topology"
)

// clients builds a typed and a dynamic client for cfg, failing the test on error.
func clients(t *testing.T, cfg *rest.Config) (*kubernetes.Clientset, *dynamic.DynamicClient) {
	t.Helper()
	if cfg == nil {
		t.Fatal("no client configuration: is the environment running?")
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, dyn
}

// mustTopology builds the topology of cfg, failing the test on error.
func mustTopology(t *testing.T, cfg *config.TopologyConfig) *topology.Topology {
	t.Helper()
	topo, err := topology.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

var notLabelChars = regexp.MustCompile(`[^a-z0-9-]+`)

// newNamespace creates a namespace of the test's own on the cluster of cfg, named after the
// test, and deletes it when the test ends. (envtest runs no namespace controller, so the
// namespace stays Terminating; its name is never reused.)
func newNamespace(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	cs, _ := clients(t, cfg)
	prefix := strings.Trim(notLabelChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(prefix) > 40 {
		prefix = strings.Trim(prefix[:40], "-")
	}
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a namespace: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is canceled by now.
		if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// namespacesVia lists the namespaces of a server through a kubeconfig file, as a user of
// the written kubeconfigs (kubectl) would.
func namespacesVia(t *testing.T, kubeconfig string) []string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("%s: %v", kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("%s: list namespaces: %v", kubeconfig, err)
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	return names
}

// ownHostedControlPlane creates a hosted control plane of the test's own on the management
// server (a namespace and a HostedControlPlane object named name) and writes its
// configuration, so that fixed object names never meet other tests'. It returns the
// configuration and the file it was written to.
func ownHostedControlPlane(t *testing.T, name string) (*config.TopologyConfig, string) {
	t.Helper()
	mgmtCfg := hosted.Config(cluster.Management)
	ns := newNamespace(t, mgmtCfg)
	_, dyn := clients(t, mgmtCfg)
	hcp := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"releaseImage": cluster.ReleaseImage, "pullSecret": map[string]any{"name": "pull-secret"}, "configuration": map[string]any{},
	}}}
	hcp.SetGroupVersionKind(hypershift.HostedControlPlaneGVK())
	hcp.SetNamespace(ns)
	hcp.SetName(name)
	if _, err := dyn.Resource(hypershift.HostedControlPlaneGVR()).Namespace(ns).Create(t.Context(), hcp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cs, _ := clients(t, mgmtCfg)
	guestCA := hosted.Config(cluster.Guest).CAData
	for _, cm := range []*corev1.ConfigMap{cluster.RootCA(ns, guestCA), cluster.MasterCABundle(ns, guestCA)} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The real CAO's operands carry labels HyperShift reserves: the allowance the shipped CAO
	// configurations give it (examples/cluster-authentication-operator/hosted.yaml).
	data := []byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Hosted\n  hosted: {namespace: " + ns + ", hostedControlPlane: " + name + "}\n" +
		"policy:\n  operators:\n  - name: cluster-authentication-operator\n    management:\n      labels:\n" +
		"      - {key: app, value: oauth-openshift}\n      - {key: app, value: openshift-oauth-apiserver}\n" +
		"      - {key: hypershift.openshift.io/control-plane-component, value: oauth-openshift}\n")
	cfg, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, writeFile(t, "topology.yaml", data)
}

// configWith writes a copy of an examples/ configuration, edited, and returns its path
// (a file of the same base name).
func configWith(t *testing.T, example string, edit func(*config.TopologyConfig)) string {
	t.Helper()
	cfg, err := config.Load(filepath.Join("..", "examples", example))
	if err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	return writeYAML(t, filepath.Base(example), cfg)
}

// withExampleHosted returns a copy of own, the hosted topology of a test's own
// HostedControlPlane, that keeps what the shipped example says of its operands: their
// config files (guestIdentity.kubeconfigFields) and what HyperShift's components declare of
// themselves (hypershift: images, request serving, zones, konnectivity, the prober), with the
// example's HCP namespace in the konnectivity no-proxy lists replaced by own's.
func withExampleHosted(own, example *config.HostedTopology) *config.HostedTopology {
	h := *own
	if example == nil {
		return &h
	}
	h.GuestIdentity.KubeconfigFields = slices.Clone(example.GuestIdentity.KubeconfigFields)
	h.HyperShift = example.HyperShift
	h.ServiceCA = example.ServiceCA
	h.HyperShift.Konnectivity = slices.Clone(example.HyperShift.Konnectivity)
	for i, k := range h.HyperShift.Konnectivity {
		noProxy := slices.Clone(k.ProxyEnv.NoProxy)
		for j, host := range noProxy {
			noProxy[j] = strings.ReplaceAll(host, "."+example.Namespace+".", "."+own.Namespace+".")
		}
		h.HyperShift.Konnectivity[i].ProxyEnv.NoProxy = noProxy
	}
	return &h
}

// writeYAML writes v as YAML into a file named name in a directory of the test's own and
// returns its path.
func writeYAML(t *testing.T, name string, v any) string {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, name, data)
}

// writeFile writes data into a file named name in a directory of the test's own and
// returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// restMapper returns a REST mapper that discovers the resources cfg's server serves.
func restMapper(t *testing.T, cfg *rest.Config) meta.RESTMapper {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return mapper
}

// writeKubeconfigs writes the kubeconfig files of env to a directory of the test's own
// (cluster.KubeconfigFile names each) and returns the directory.
func writeKubeconfigs(t *testing.T, env *cluster.Environment) string {
	t.Helper()
	dir := t.TempDir()
	if err := env.WriteKubeconfigs(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostedKubeconfigFlags are topolayer's flags naming the hosted environment's kubeconfig
// files that writeKubeconfigs wrote to dir.
func hostedKubeconfigFlags(dir string) []string {
	return []string{
		"--management-kubeconfig", cluster.KubeconfigFile(dir, cluster.Management),
		"--guest-kubeconfig", cluster.KubeconfigFile(dir, cluster.Guest),
	}
}
