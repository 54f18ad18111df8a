package cluster

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/hosted/shadow"
)

// checkHyperShiftCRD checks that crd is valid, named for gvr, namespaced, and serves gvr's
// version with the status subresource; it returns that version.
func checkHyperShiftCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, gvr schema.GroupVersionResource) apiextensionsv1.CustomResourceDefinitionVersion {
	t.Helper()
	if err := shadow.Validate(crd); err != nil {
		t.Fatal(err)
	}
	if name := gvr.GroupResource().String(); crd.Name != name || crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("name %s scope %s, want %s Namespaced", crd.Name, crd.Spec.Scope, name)
	}
	v := crd.Spec.Versions[0]
	if v.Name != gvr.Version || v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("version %s subresources %+v, want %s with status", v.Name, v.Subresources, gvr.Version)
	}
	return v
}

func TestHostedControlPlaneCRDIsValid(t *testing.T) {
	checkHyperShiftCRD(t, HostedControlPlaneCRD(), hosted.HostedControlPlaneGVR())
}

func TestControlPlaneComponentCRDIsValid(t *testing.T) {
	v := checkHyperShiftCRD(t, ControlPlaneComponentCRD(), hosted.ControlPlaneComponentGVR())
	// HyperShift's status fields (api/hypershift/v1beta1/controlplanecomponent_types.go).
	status := v.Schema.OpenAPIV3Schema.Properties["status"].Properties
	for _, f := range []string{"conditions", "version", "resources", "observedGeneration"} {
		if _, ok := status[f]; !ok {
			t.Errorf("status has no field %s", f)
		}
	}
}

func TestManagementCRDs(t *testing.T) {
	var payload []*apiextensionsv1.CustomResourceDefinition
	// manifest is the manifest of a CRD of one served version with an open schema.
	manifest := func(group, kind, plural, scope string) string {
		return `
metadata: {name: ` + plural + "." + group + `}
spec:
  group: ` + group + `
  names: {kind: ` + kind + `, listKind: ` + kind + `List, plural: ` + plural + `, singular: ` + strings.ToLower(kind) + `}
  scope: ` + scope + `
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`
	}
	for _, doc := range []string{
		manifest("example.com", "Widget", "widgets", "Cluster"),
		manifest("example.com", "Gadget", "gadgets", "Namespaced"),
		manifest("route.openshift.io", "Route", "routes", "Namespaced"),
	} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal([]byte(doc), crd); err != nil {
			t.Fatal(err)
		}
		payload = append(payload, crd)
	}
	crds, err := ManagementCRDs(payload)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, crd := range crds {
		names = append(names, crd.Name)
		if slices.Contains(ManagementNative, crd.Name) {
			continue // served as it is, not a shadow
		}
		if err := shadow.Validate(crd); err != nil {
			t.Error(err)
		}
	}
	want := []string{
		"hostedcontrolplanes.hypershift.openshift.io",
		"controlplanecomponents.hypershift.openshift.io",
		"widgets.example.com.shadow.topolayer.dev",
		"routes.route.openshift.io",
		"certificatesigningrequests.certificates.k8s.io.shadow.topolayer.dev",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("ManagementCRDs names (-want +got):\n%s", diff)
	}
	if payload[0].Spec.Group != "example.com" {
		t.Error("ManagementCRDs modified its input")
	}
}

func TestAssetsDirFromEnvironment(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(EnvAssets, empty)
	if _, err := AssetsDir(t.Context(), nil); !errors.Is(err, ErrNoAssets) {
		t.Errorf("%s=%s (empty): err = %v, want ErrNoAssets", EnvAssets, empty, err)
	}

	full := t.TempDir()
	for _, bin := range assetBinaries {
		if err := os.WriteFile(filepath.Join(full, bin), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvAssets, full)
	if got, err := AssetsDir(t.Context(), nil); err != nil || got != full {
		t.Errorf("%s=%s: AssetsDir() = %q, %v; want the directory itself", EnvAssets, full, got, err)
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if got := modulePathOf(filepath.Join(root, "go.mod")); got != ModulePath {
		t.Errorf("ModuleRoot() = %s, whose go.mod declares %q", root, got)
	}
	if _, err := os.Stat(filepath.Join(root, AssetsScript)); err != nil {
		t.Errorf("ModuleRoot() = %s: %v", root, err)
	}

	// From a directory outside the module, the source location still finds it (unless the
	// test was built with -trimpath).
	if _, file, _, _ := runtime.Caller(0); !filepath.IsAbs(file) {
		return
	}
	t.Chdir(t.TempDir())
	if got, err := ModuleRoot(); err != nil || got != root {
		t.Errorf("ModuleRoot() outside the module = %q, %v; want %s", got, err, root)
	}
}

func TestModulePathOf(t *testing.T) {
	tests := map[string]string{
		"module github.com/topolayer/topolayer\n\ngo 1.26\n": ModulePath,
		"// comment\nmodule \"example.com/m\" // trailing\n": "example.com/m",
		"go 1.26\n":               "",
		"modulex example.com/m\n": "",
	}
	for content, want := range tests {
		f := filepath.Join(t.TempDir(), "go.mod")
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := modulePathOf(f); got != want {
			t.Errorf("modulePathOf(%q) = %q, want %q", content, got, want)
		}
	}
}

func TestKubeconfigRoundTrip(t *testing.T) {
	in := &rest.Config{Host: "https://127.0.0.1:6443/", TLSClientConfig: rest.TLSClientConfig{
		CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key"),
	}}
	kc, err := kubeconfigFromREST(Management, in)
	if err != nil {
		t.Fatal(err)
	}
	file := KubeconfigFile(t.TempDir(), Management)
	if err := clientcmd.WriteToFile(*kc, file); err != nil {
		t.Fatal(err)
	}
	out, err := clientcmd.BuildConfigFromFlags("", file)
	if err != nil {
		t.Fatal(err)
	}
	if out.Host != in.Host || string(out.CAData) != "ca" || string(out.CertData) != "cert" || string(out.KeyData) != "key" {
		t.Errorf("round trip: host %q ca %q cert %q key %q", out.Host, out.CAData, out.CertData, out.KeyData)
	}
	if kc.CurrentContext != Management {
		t.Errorf("current context %q, want %q", kc.CurrentContext, Management)
	}

	if _, err := kubeconfigFromREST(Guest, &rest.Config{Host: in.Host}); err == nil {
		t.Error("a configuration without a client certificate: no error")
	}
}

func TestEnvironmentDefaults(t *testing.T) {
	tests := []struct {
		name     string
		env      *Environment
		clusters []string
		hcp      config.HostedTopology
	}{
		{"zero value is hosted", &Environment{}, []string{Management, Guest}, DefaultHostedControlPlane},
		{"standalone", &Environment{Topology: config.Standalone}, []string{Single}, config.HostedTopology{}},
		{"topology from the configuration", &Environment{TopologyConfig: &config.TopologyConfig{Topology: config.Topology{Type: config.Standalone}}}, []string{Single}, config.HostedTopology{}},
		{"names from the configuration", &Environment{TopologyConfig: &config.TopologyConfig{Topology: config.Topology{
			Type: config.Hosted, Hosted: &config.HostedTopology{Namespace: "clusters-a", HostedControlPlane: "a"},
		}}}, []string{Management, Guest}, config.HostedTopology{Namespace: "clusters-a", HostedControlPlane: "a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.clusters, tc.env.Clusters()); diff != "" {
				t.Errorf("Clusters() (-want +got):\n%s", diff)
			}
			if got := tc.env.HostedControlPlane(); !cmp.Equal(got, tc.hcp) {
				t.Errorf("HostedControlPlane() = %+v, want %+v", got, tc.hcp)
			}
			if cfg := tc.env.Config(tc.clusters[0]); cfg != nil {
				t.Errorf("Config(%q) before Start = %v, want nil", tc.clusters[0], cfg)
			}
		})
	}
}

func TestStartRefusesAnUnknownTopology(t *testing.T) {
	env := &Environment{Topology: "Sideways"}
	if err := env.Start(t.Context()); err == nil {
		t.Fatal("Start with topology Sideways: no error")
	}
}

func TestPrefixWriter(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	w := &prefixWriter{mu: &mu, w: &out, prefix: "[guest] "}
	for _, s := range []string{"one\ntw", "o\n", "three"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	w.flush()
	if want := "[guest] one\n[guest] two\n[guest] three\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
