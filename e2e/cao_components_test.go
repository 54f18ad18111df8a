package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hypershift "github.com/topolayer/topolayer/hosted"
)

// TestRealCAOComponentStatus runs the real cluster-authentication-operator through
// examples/hosted-embedding with --component-status, in a hosted control plane seeded as
// TestRealCAOHosted seeds it: the oauth-openshift Deployment it places gets the
// ControlPlaneComponent oauth-openshift (its standalone name), not Available while no pod
// runs, and Available once the Deployment has rolled out (kubelet-less: its status written
// as the deployment controller would, see rolledOut).
func TestRealCAOComponentStatus(t *testing.T) {
	h := setUpCAOHosted(t, "cao", nil)
	hcpNS, cfgFile, mgmt := h.hcpNS, h.cfgFile, h.mgmt

	kubeDir := writeKubeconfigs(t, hosted)
	start := time.Now()
	startProcess(t, binary(t, "hosted-embedding"), append([]string{"--config", cfgFile, "--component-status"}, hostedKubeconfigFlags(kubeDir)...)...)

	mgmtCS, mgmtDyn := clients(t, mgmt)
	cpcs := mgmtDyn.Resource(hypershift.ControlPlaneComponentGVR()).Namespace(hcpNS)
	available := func(ctx context.Context) (string, *unstructured.Unstructured, error) {
		cpc, err := cpcs.Get(ctx, "oauth-openshift", metav1.GetOptions{})
		if err != nil {
			return "", nil, err
		}
		conds, _, _ := unstructured.NestedSlice(cpc.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == hypershift.ComponentAvailable {
				return fmt.Sprint(m["status"]), cpc, nil
			}
		}
		return "", cpc, nil
	}
	eventuallyWithin(t, "the ControlPlaneComponent oauth-openshift of CAO's Deployment", 2*time.Minute, func(ctx context.Context) (bool, error) {
		s, _, err := available(ctx)
		return s == string(metav1.ConditionFalse), err
	})
	t.Logf("the ControlPlaneComponent oauth-openshift written %s after the start, not Available", time.Since(start).Round(time.Millisecond))

	d, err := mgmtCS.AppsV1().Deployments(hcpNS).Get(t.Context(), "openshift-authentication--oauth-openshift", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rolledOut(d)
	t0 := time.Now()
	if _, err := mgmtCS.AppsV1().Deployments(hcpNS).UpdateStatus(t.Context(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var cpc *unstructured.Unstructured
	// The Deployment's status is an input of CAO: the change runs it, drawing as the example
	// says (operators[].draws), before the status is written.
	eventuallyWithin(t, "the ControlPlaneComponent oauth-openshift Available", caoFirstRun, func(ctx context.Context) (bool, error) {
		var s string
		var err error
		s, cpc, err = available(ctx)
		return s == string(metav1.ConditionTrue), err
	})
	status, _, _ := unstructured.NestedMap(cpc.Object, "status")
	t.Logf("Available %s after the rollout; status: %v", time.Since(t0).Round(time.Millisecond), status)
}
