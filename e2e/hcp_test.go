package e2e

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/config"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// TestHostedControlPlane checks the hosted control plane the harness creates on the
// management server, as examples/hosted.yaml names it: the HCP namespace, its pull secret,
// and the HostedControlPlane object; and that the guest has none of them.
func TestHostedControlPlane(t *testing.T) {
	want := config.HostedTopology{Namespace: "clusters-example", HostedControlPlane: "example"}
	if got := hosted.HostedControlPlane(); got.Namespace != want.Namespace || got.HostedControlPlane != want.HostedControlPlane {
		t.Fatalf("HostedControlPlane() = %+v, want %+v (examples/hosted.yaml)", got, want)
	}
	ctx := t.Context()
	cs, dyn := clients(t, hosted.Config(cluster.Management))

	ns, err := cs.CoreV1().Namespaces().Get(ctx, want.Namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the HCP namespace: %v", err)
	}
	if ns.Labels[cluster.LabelHCPNamespace] != "true" {
		t.Errorf("namespace %s labels = %v, want %s=true", ns.Name, ns.Labels, cluster.LabelHCPNamespace)
	}

	secret, err := cs.CoreV1().Secrets(want.Namespace).Get(ctx, hypershift.PullSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the pull secret: %v", err)
	}
	if secret.Type != corev1.SecretTypeDockerConfigJson {
		t.Errorf("pull secret type = %s, want %s", secret.Type, corev1.SecretTypeDockerConfigJson)
	}

	hcps := dyn.Resource(hypershift.HostedControlPlaneGVR()).Namespace(want.Namespace)
	hcp, err := hcps.Get(ctx, want.HostedControlPlane, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the HostedControlPlane: %v", err)
	}
	if got, _, _ := unstructured.NestedString(hcp.Object, "spec", "pullSecret", "name"); got != hypershift.PullSecretName {
		t.Errorf("spec.pullSecret.name = %q, want %q", got, hypershift.PullSecretName)
	}
	if got, _, _ := unstructured.NestedString(hcp.Object, "spec", "releaseImage"); got != cluster.ReleaseImage {
		t.Errorf("spec.releaseImage = %q, want %q", got, cluster.ReleaseImage)
	}
	if hcp.GetUID() == "" {
		t.Error("the HostedControlPlane has no uid, which ownerReferences need")
	}
	list, err := hcps.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d HostedControlPlanes in %s, want 1", len(list.Items), want.Namespace)
	}

	guest, _ := clients(t, hosted.Config(cluster.Guest))
	if _, err := guest.CoreV1().Namespaces().Get(ctx, want.Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s on the guest: err = %v, want NotFound", want.Namespace, err)
	}
}

// TestClusters checks the cluster names of each topology, and that a standalone
// environment names no hosted control plane.
func TestClusters(t *testing.T) {
	if got, want := hosted.Clusters(), []string{cluster.Management, cluster.Guest}; !slices.Equal(got, want) {
		t.Errorf("hosted Clusters() = %v, want %v", got, want)
	}
	if got, want := standalone.Clusters(), []string{cluster.Single}; !slices.Equal(got, want) {
		t.Errorf("standalone Clusters() = %v, want %v", got, want)
	}
	if got := standalone.HostedControlPlane(); got.Namespace != "" || got.HostedControlPlane != "" {
		t.Errorf("standalone HostedControlPlane() = %+v, want none", got)
	}
	if cfg := hosted.Config(cluster.Single); cfg != nil {
		t.Errorf("hosted Config(%q) = %v, want nil", cluster.Single, cfg.Host)
	}
}
