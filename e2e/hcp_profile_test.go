package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/mom/manager"
)

// TestHostedControlPlaneProfile: topolayer run and a program that embeds topolayer
// (examples/hosted-embedding) read the HostedControlPlane from the management cluster and
// give it to the hypershift profile before their first plan: the sample Deployment is placed
// with the replicas, rollout, priority class and read-only root filesystem of the
// HighlyAvailable policy, whatever count the operator writes. Patching the HostedControlPlane
// to SingleReplica, with a priority class override, re-places it with 1 replica and that class
// without a restart: every operator runs once (trigger hosted-control-plane). A change of the
// HostedControlPlane's status, which the profile does not read, runs nothing. The
// environment's HostedControlPlane is restored at the end, and the objects placed removed.
func TestHostedControlPlaneProfile(t *testing.T) {
	h := newHostedSample(t)
	hcp := hosted.HostedControlPlane()
	hcps := h.mgmtDyn.Resource(hypershift.HostedControlPlaneGVR()).Namespace(hcp.Namespace)
	patch := func(t *testing.T, doc string, subresources ...string) {
		t.Helper()
		if _, err := hcps.Patch(context.Background(), hcp.HostedControlPlane, types.MergePatchType, []byte(doc), metav1.PatchOptions{}, subresources...); err != nil {
			t.Fatalf("patch the HostedControlPlane with %s: %v", doc, err)
		}
	}
	const restore = `{"metadata":{"annotations":{"` + hypershift.AnnotationControlPlanePriority + `":null}},"spec":{"controllerAvailabilityPolicy":null}}`
	t.Cleanup(func() { patch(t, restore) })
	// The test places the sample operators' objects from nothing, and leaves none: a later
	// test that finds the Deployment expects the status it left on it, if any.
	removePlaced(t, h.hcpNS)
	// The operator asks for 1 replica; the profile sizes the Deployment by the policy.
	kubectl(t, cluster.KubeconfigFile(h.kubeDir, cluster.Guest), "create", "configmap", "sample-settings", "-n", "openshift-config", "--from-literal=replicas=1")
	cfgFile := demoConfig(t, "hosted-demo.yaml", nil)
	kubeconfigs := hostedKubeconfigFlags(h.kubeDir)

	// placedAs holds once the sample Deployment is placed as the profile places it for hcp.
	placedAs := func(want *hypershift.HostedControlPlane) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			d, err := h.mgmtCS.AppsV1().Deployments(h.hcpNS).Get(ctx, "openshift-sample--sample", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return placedProblem(d, want) == "", nil
		}
	}
	for _, program := range []struct {
		name string
		args []string
	}{
		{"topolayer run", append([]string{"run", "--config", cfgFile}, kubeconfigs...)},
		{"hosted-embedding", append([]string{"--config", cfgFile, "--in-process"}, kubeconfigs...)},
	} {
		t.Run(program.name, func(t *testing.T) {
			ha := &hypershift.HostedControlPlane{AvailabilityPolicy: hypershift.HighlyAvailable}
			patch(t, `{"metadata":{"annotations":{"`+hypershift.AnnotationControlPlanePriority+`":null}},"spec":{"controllerAvailabilityPolicy":"HighlyAvailable"}}`)
			bin := binary(t, "topolayer")
			if program.name == "hosted-embedding" {
				bin = binary(t, "hosted-embedding")
			}
			p := startProcess(t, bin, program.args...)
			eventually(t, "the sample Deployment placed with the HighlyAvailable profile", placedAs(ha))
			before := settle(t, p, sampleOp, auditOp)

			// The status changes: nothing the profile reads.
			patch(t, fmt.Sprintf(`{"status":{"e2e":%q}}`, time.Now().Format(time.RFC3339Nano)), "status")
			afterStatus := settle(t, p, sampleOp, auditOp)
			for _, op := range []string{sampleOp, auditOp} {
				if total(afterStatus[op]) != total(before[op]) {
					t.Errorf("%s ran after a change of the HostedControlPlane's status only: %v, then %v", op, before[op], afterStatus[op])
				}
			}

			single := &hypershift.HostedControlPlane{AvailabilityPolicy: hypershift.SingleReplica, Annotations: map[string]string{hypershift.AnnotationControlPlanePriority: "e2e-low"}}
			start := time.Now()
			patch(t, `{"metadata":{"annotations":{"`+hypershift.AnnotationControlPlanePriority+`":"e2e-low"}},"spec":{"controllerAvailabilityPolicy":"SingleReplica"}}`)
			eventually(t, "the sample Deployment placed with the SingleReplica profile", placedAs(single))
			t.Logf("%s: HostedControlPlane patched to SingleReplica → the sample Deployment with 1 replica in %s", program.name, time.Since(start).Round(time.Millisecond))
			after := settle(t, p, sampleOp, auditOp)
			for _, op := range []string{sampleOp, auditOp} {
				if d := after[op][manager.TriggerHostedControlPlane] - afterStatus[op][manager.TriggerHostedControlPlane]; d != 1 {
					t.Errorf("%s ran %v times for the HostedControlPlane's change, want 1 (every operator runs once)", op, d)
				}
				if d := after[op][manager.TriggerChange] - afterStatus[op][manager.TriggerChange]; d != 0 {
					t.Errorf("%s ran %v times for a change of its inputs, want 0", op, d)
				}
			}
		})
	}
	removePlaced(t, h.hcpNS) // each program has stopped with its subtest
}

// placedProblem says how d, the placed sample Deployment, differs from what the hypershift
// profile makes of it for hcp; "" when it does not.
func placedProblem(d *appsv1.Deployment, hcp *hypershift.HostedControlPlane) string {
	want := int32(hcp.Replicas("sample"))
	spec := d.Spec.Template.Spec
	switch {
	case ptr.Deref(d.Spec.Replicas, -1) != want:
		return fmt.Sprintf("replicas %d, want %d", ptr.Deref(d.Spec.Replicas, -1), want)
	case ptr.Deref(d.Spec.RevisionHistoryLimit, -1) != 2:
		return "revisionHistoryLimit is not 2"
	case spec.PriorityClassName != hcp.PriorityClass("sample"):
		return fmt.Sprintf("priorityClassName %q, want %q", spec.PriorityClassName, hcp.PriorityClass("sample"))
	}
	if want > 1 {
		// Two replicas: one more before one goes; three: one goes before another comes.
		surge, unavailable := 1, 0
		if want > 2 {
			surge, unavailable = 0, 1
		}
		r := d.Spec.Strategy.RollingUpdate
		if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || r == nil || r.MaxSurge.IntValue() != surge || r.MaxUnavailable.IntValue() != unavailable {
			return fmt.Sprintf("strategy %+v, want RollingUpdate with maxSurge %d and maxUnavailable %d", d.Spec.Strategy, surge, unavailable)
		}
	}
	for _, c := range spec.Containers {
		if c.SecurityContext == nil || !ptr.Deref(c.SecurityContext.ReadOnlyRootFilesystem, false) {
			return fmt.Sprintf("container %s: the root filesystem is not read-only", c.Name)
		}
	}
	return ""
}

// total adds up an operator's runs of every trigger.
func total(c runCounts) float64 {
	var n float64
	for _, v := range c {
		n += v
	}
	return n
}
