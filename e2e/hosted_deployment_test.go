package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/topology"
)

// TestTranslatedOAuthDeploymentAccepted: the oauth-openshift Deployment of the CAO corpus,
// translated for the hosted control plane (renamed references, the hypershift profile, the
// mounts of removed host-path volumes gone), is accepted by the real management API server.
// The corpus Deployment has an empty image (the operator ran without its image
// environment: the field is absent), which no server accepts; the test fills that one field
// and nothing else.
// Server-side dry run: nothing is stored.
func TestTranslatedOAuthDeploymentAccepted(t *testing.T) {
	c, out, declared := oauthServerCreation(t)
	cfg, err := config.Load("../examples/hosted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	engine, err := topology.Engine(cfg, c.Operator, declared)
	if err != nil {
		t.Fatal(err)
	}
	plan := engine.Plan(out)
	var body []byte
	for _, e := range plan.Entries {
		if e.Source.Resource == "deployments" && e.Mutation != nil {
			body = contracttest.Bytes(t, e.Mutation)
		}
	}
	if body == nil {
		t.Fatal("no translated Deployment in the plan")
	}
	var obj map[string]any
	if err := yaml.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for i := range containers {
		if ct, ok := containers[i].(map[string]any); ok && (ct["image"] == nil || ct["image"] == "") {
			ct["image"] = "registry.example/oauth-server:test"
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	_, dyn := clients(t, hosted.Config(cluster.Management))
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	// Server-side apply with dry-run: the server validates the object whether or not another
	// test of this package has already written it, and stores nothing.
	created, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Apply(t.Context(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "topolayer-e2e", Force: true, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("the management API server refuses the translated Deployment: %v", err)
	}
	if created.GetNamespace() != "clusters-example" || created.GetName() != "openshift-authentication--oauth-openshift" {
		t.Fatalf("accepted as %s/%s", created.GetNamespace(), created.GetName())
	}
}

// TestTranslatedOAuthDeploymentWithHyperShiftComponents: the oauth-openshift Deployment of
// the CAO corpus, translated with the shipped hosted CAO example, a HostedControlPlane, and
// what HyperShift's own oauth-openshift component declares (both konnectivity proxies, the
// availability prober, payload images), the HostedControlPlane having a proxy with a
// trusted CA and an additional trust bundle (the HTTPS sidecar's proxy flags, the projected
// trust bundles in both sidecars), is accepted by the real management API server
// (server-side dry run), and its pod, sidecars and init container included, is admitted by
// the server's Pod Security admission in a namespace that enforces "restricted"; the same
// pod with a sidecar as HyperShift writes it (no securityContext) is refused there.
func TestTranslatedOAuthDeploymentWithHyperShiftComponents(t *testing.T) {
	c, out, declared := oauthServerCreation(t)
	cfg, err := config.Load("../examples/cluster-authentication-operator/hosted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	components := &cfg.Topology.Hosted.HyperShift
	components.Images = map[string]string{hypershift.ImageControlPlaneOperator: "registry.example/cpo:test", hypershift.ImageAvailabilityProber: "registry.example/prober:test"}
	components.AvailabilityProber = []string{"oauth-openshift"}
	components.Konnectivity = []hypershift.KonnectivityProxy{{
		Workload: "oauth-openshift", Mode: hypershift.KonnectivityDual,
		HTTPS:    hypershift.KonnectivityHTTPSOptions{ServingPort: 8092, ConnectDirectlyToCloudAPIs: &yes},
		SOCKS5:   hypershift.KonnectivitySOCKS5Options{ResolveFromGuestClusterDNS: &yes, ResolveFromManagementClusterDNS: &yes},
		ProxyEnv: hypershift.ProxyEnv{Containers: []string{"oauth-openshift"}, NoProxy: []string{"kube-apiserver", "audit-webhook"}},
	}}
	// The guest has a cluster-wide proxy with a CA of its own and an additional trust bundle:
	// the HTTPS sidecar forwards through the proxy and both sidecars mount both bundles.
	var hcpSpec map[string]any
	if err := yaml.Unmarshal([]byte(`
platform: {type: AWS, aws: {region: eu-west-1}}
networking: {machineNetwork: [{cidr: 10.0.0.0/16}], serviceNetwork: [{cidr: 172.30.0.0/16}], clusterNetwork: [{cidr: 10.132.0.0/14}]}
additionalTrustBundle: {name: user-ca-bundle}
configuration: {proxy: {httpProxy: "http://proxy.corp:3128", httpsProxy: "http://proxy.corp:3128", noProxy: idp.corp, trustedCA: {name: proxy-ca}}}`), &hcpSpec); err != nil {
		t.Fatal(err)
	}
	hcpObj := &unstructured.Unstructured{Object: map[string]any{"spec": hcpSpec}}
	hcpObj.SetGroupVersionKind(hypershift.HostedControlPlaneGVK())
	hcpObj.SetNamespace(cfg.Topology.Hosted.Namespace)
	hcpObj.SetName(cfg.Topology.Hosted.HostedControlPlane)
	h, err := hypershift.ParseHostedControlPlane(hcpObj)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := mustTopology(t, cfg).WithHostedControlPlane(h)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := topo.Engine(c.Operator, declared)
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	for _, e := range engine.Plan(out).Entries {
		if e.Source.Resource == "deployments" && e.Mutation != nil {
			body = contracttest.Bytes(t, e.Mutation)
		}
	}
	if body == nil {
		t.Fatal("no translated Deployment in the plan")
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	for i := range d.Spec.Template.Spec.Containers {
		if d.Spec.Template.Spec.Containers[i].Image == "" { // the corpus ran without its image environment
			d.Spec.Template.Spec.Containers[i].Image = "registry.example/oauth-server:test"
		}
	}
	mgmt := hosted.Config(cluster.Management)
	cs, _ := clients(t, mgmt)
	// A namespace of its own: the example's HCP namespace is shared, and other tests place
	// this Deployment there.
	ns := newNamespace(t, mgmt)
	d.Namespace = ns
	if _, err := cs.AppsV1().Deployments(d.Namespace).Create(t.Context(), &d, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("the management API server refuses the translated Deployment: %v", err)
	}
	nsObj, err := cs.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if _, err := cs.CoreV1().Namespaces().Update(t.Context(), nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	podOf := func(spec corev1.PodSpec) *corev1.Pod {
		spec.PriorityClassName = "" // HyperShift's priority classes are not on this server; Priority admission is not the check
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "oauth-openshift-0", Namespace: ns, Labels: d.Spec.Template.Labels}, Spec: spec}
	}
	spec := d.Spec.Template.Spec
	var names []string
	for _, ctr := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		names = append(names, ctr.Name)
	}
	for _, want := range []string{"availability-prober", "konnectivity-proxy-https", "konnectivity-proxy-socks5"} {
		if !slices.Contains(names, want) {
			t.Fatalf("containers %v lack %s", names, want)
		}
	}
	for _, ctr := range spec.Containers {
		if !strings.HasPrefix(ctr.Name, "konnectivity-proxy-") {
			continue
		}
		var trusted []string
		for _, m := range ctr.VolumeMounts {
			if m.Name == hypershift.KonnectivityTrustBundleVolume {
				trusted = append(trusted, m.MountPath)
			}
		}
		if want := []string{"/etc/pki/tls/certs/additional-ca-bundle.pem", "/etc/pki/tls/certs/proxy-trusted-ca.pem"}; !slices.Equal(trusted, want) {
			t.Errorf("%s mounts the trust bundles at %v, want %v", ctr.Name, trusted, want)
		}
		if hasProxy := slices.Contains(ctr.Args, "--https-proxy"); hasProxy != (ctr.Name == "konnectivity-proxy-https") {
			t.Errorf("%s args %v: --https-proxy there %t", ctr.Name, ctr.Args, hasProxy)
		}
	}
	if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), podOf(spec), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("Pod Security admission refuses the placed pod (containers %v): %v", names, err)
	}
	unrestricted := *spec.DeepCopy()
	for i := range unrestricted.Containers {
		if strings.HasPrefix(unrestricted.Containers[i].Name, "konnectivity-proxy-") {
			unrestricted.Containers[i].SecurityContext = nil
		}
	}
	if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), podOf(unrestricted), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil || !strings.Contains(err.Error(), "konnectivity-proxy-") {
		t.Fatalf("a sidecar as HyperShift writes it is admitted, or refused for another reason: %v", err)
	}
}

// oauthServerCreation returns the CAO corpus case in which the operator creates the OAuth
// server (oauth-server-creation-minimal), its recorded output and its declared outputs.
func oauthServerCreation(t *testing.T) (corpus.Case, *contract.OutputDir, *contract.OutputResources) {
	t.Helper()
	var c corpus.Case
	for _, cc := range corpus.CAOCases(t) {
		if strings.HasSuffix(cc.Name, "/oauth-server-creation-minimal") {
			c = cc
		}
	}
	out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.OutputResources)
	if err != nil {
		t.Fatal(err)
	}
	declared, err := contract.ParseOutputResources(data)
	if err != nil {
		t.Fatal(err)
	}
	return c, out, declared
}
