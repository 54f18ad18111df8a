package e2e

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	samplecrds "github.com/topolayer/topolayer/internal/samples/crds"
	"github.com/topolayer/topolayer/namespaces"
)

var (
	operatorV1       = schema.GroupVersion{Group: "operator.openshift.io", Version: "v1"}
	configV1         = schema.GroupVersion{Group: "config.openshift.io", Version: "v1"}
	shadowOperatorV1 = schema.GroupVersion{Group: namespaces.ShadowGroup(operatorV1.Group), Version: "v1"}
	shadowConfigV1   = schema.GroupVersion{Group: namespaces.ShadowGroup(configV1.Group), Version: "v1"}
	shadowCertsV1    = schema.GroupVersion{Group: namespaces.ShadowGroup("certificates.k8s.io"), Version: "v1"}
)

// TestCRDsServed checks, through discovery, which API lands where: the payload CRDs on the
// guest and the standalone cluster, their shadows and the HostedControlPlane on the
// management server, and nothing of one on the other.
func TestCRDsServed(t *testing.T) {
	tests := []struct {
		name       string
		env        *cluster.Environment
		cluster    string
		gv         schema.GroupVersion
		resource   string
		namespaced bool // when served
		served     bool
	}{
		{"guest serves operator authentications", hosted, cluster.Guest, operatorV1, "authentications", false, true},
		{"guest serves config clusteroperators", hosted, cluster.Guest, configV1, "clusteroperators", false, true},
		{"guest serves no shadows", hosted, cluster.Guest, shadowOperatorV1, "authentications", true, false},
		{"guest serves no HostedControlPlane", hosted, cluster.Guest, hypershift.HostedControlPlaneGVR().GroupVersion(), "hostedcontrolplanes", true, false},
		{"management serves shadow operator authentications", hosted, cluster.Management, shadowOperatorV1, "authentications", true, true},
		{"management serves shadow config authentications", hosted, cluster.Management, shadowConfigV1, "authentications", true, true},
		{"management serves shadow clusteroperators", hosted, cluster.Management, shadowConfigV1, "clusteroperators", true, true},
		{"management serves shadow certificatesigningrequests", hosted, cluster.Management, shadowCertsV1, "certificatesigningrequests", true, true},
		{"management serves HostedControlPlane", hosted, cluster.Management, hypershift.HostedControlPlaneGVR().GroupVersion(), "hostedcontrolplanes", true, true},
		{"management serves no payload CRDs", hosted, cluster.Management, operatorV1, "authentications", false, false},
		{"standalone serves operator authentications", standalone, cluster.Single, operatorV1, "authentications", false, true},
		{"standalone serves no shadows", standalone, cluster.Single, shadowOperatorV1, "authentications", true, false},
		{"standalone serves no HostedControlPlane", standalone, cluster.Single, hypershift.HostedControlPlaneGVR().GroupVersion(), "hostedcontrolplanes", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dc, err := discovery.NewDiscoveryClientForConfig(tc.env.Config(tc.cluster))
			if err != nil {
				t.Fatal(err)
			}
			list, err := dc.ServerResourcesForGroupVersion(tc.gv.String())
			if apierrors.IsNotFound(err) {
				list, err = &metav1.APIResourceList{}, nil
			}
			if err != nil {
				t.Fatalf("discovery of %s on %s: %v", tc.gv, tc.cluster, err)
			}
			var found *metav1.APIResource
			for i, r := range list.APIResources {
				if r.Name == tc.resource {
					found = &list.APIResources[i]
				}
			}
			switch {
			case tc.served && found == nil:
				t.Fatalf("%s does not serve %s in %s", tc.cluster, tc.resource, tc.gv)
			case !tc.served && found != nil:
				t.Fatalf("%s serves %s in %s, want not served", tc.cluster, tc.resource, tc.gv)
			case found != nil && found.Namespaced != tc.namespaced:
				t.Errorf("%s: %s in %s is namespaced=%v, want %v", tc.cluster, tc.resource, tc.gv, found.Namespaced, tc.namespaced)
			}
		})
	}
}

// TestEveryCRDEstablished checks that every CRD the harness installs is established, and
// that the management server holds one shadow per cluster-scoped payload CRD.
func TestEveryCRDEstablished(t *testing.T) {
	payload, err := cluster.PayloadCRDs()
	if err != nil {
		t.Fatal(err)
	}
	samples, err := samplecrds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	// The harness serves the sample operators' CRDs next to the payload's.
	payload = append(payload, samples...)
	management, err := cluster.ManagementCRDs(payload)
	if err != nil {
		t.Fatal(err)
	}
	clusterScoped := 0
	for _, crd := range payload {
		if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			clusterScoped++
		}
	}
	if want := 2 + clusterScoped + len(cluster.BuiltinShadows) + len(cluster.ManagementNative); len(management) != want {
		t.Errorf("ManagementCRDs: %d CRDs, want %d (HostedControlPlane, ControlPlaneComponent, %d shadows, %d built-in shadows, %d served as they are)", len(management), want, clusterScoped, len(cluster.BuiltinShadows), len(cluster.ManagementNative))
	}
	t.Logf("payload: %d CRDs (%d cluster-scoped); management: %d CRDs", len(payload), clusterScoped, len(management))

	tests := []struct {
		env     *cluster.Environment
		cluster string
		want    []*apiextensionsv1.CustomResourceDefinition
	}{
		{hosted, cluster.Guest, payload},
		{hosted, cluster.Management, management},
		{standalone, cluster.Single, payload},
	}
	for _, tc := range tests {
		t.Run(tc.cluster, func(t *testing.T) {
			cs, err := apiextensionsclient.NewForConfig(tc.env.Config(tc.cluster))
			if err != nil {
				t.Fatal(err)
			}
			list, err := cs.ApiextensionsV1().CustomResourceDefinitions().List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			established := map[string]bool{}
			for _, crd := range list.Items {
				for _, c := range crd.Status.Conditions {
					if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
						established[crd.Name] = true
					}
				}
			}
			for _, crd := range tc.want {
				if !established[crd.Name] {
					t.Errorf("%s: crd %s is not established", tc.cluster, crd.Name)
				}
			}
			if len(list.Items) != len(tc.want) {
				t.Errorf("%s: %d CRDs, want %d", tc.cluster, len(list.Items), len(tc.want))
			}
		})
	}
}
