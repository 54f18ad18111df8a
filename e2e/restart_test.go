package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/namespaces"
)

// slowOperator wraps the operator's command so that each run takes at least delay: long
// enough for a test to restart an API server while the run is in progress.
func slowOperator(delay time.Duration) func(*config.TopologyConfig) {
	return func(cfg *config.TopologyConfig) {
		for i := range cfg.Operators {
			op := &cfg.Operators[i]
			if op.Name != sampleOp {
				continue
			}
			op.Command = append([]string{"sh", "-c", "sleep " + strings.TrimSuffix(delay.String(), "s") + `; exec "$0" "$@"`}, op.Command...)
		}
	}
}

// TestRunSurvivesManagementRestart restarts the management API server while the sample
// operator runs: the run fails to apply, is retried, and the state converges, with each
// object written once.
func TestRunSurvivesManagementRestart(t *testing.T) {
	ctx := t.Context()
	h := newHostedSample(t)
	// What TestRunHosted may have left: this test wants the sample operator's first write.
	_ = h.mgmtCS.AppsV1().Deployments(h.hcpNS).Delete(ctx, "openshift-sample--sample", metav1.DeleteOptions{})

	p := h.startRun(t, func(cfg *config.TopologyConfig) {
		slowOperator(4 * time.Second)(cfg)
		// The operator's replica count is what the change below changes: the profile's count
		// by availability policy would hide it.
		cfg.Transforms.Disable = append(cfg.Transforms.Disable, "hypershift/replicas-by-availability")
	})
	eventually(t, "the first runs", func(context.Context) (bool, error) {
		return p.runs(t, sampleOp)[manager.TriggerStart] >= 1, nil
	})
	settle(t, p, sampleOp, auditOp)
	failedBefore := sum(p.metrics(t), "topolayer_operator_runs_total", map[string]string{"operator": sampleOp, "result": manager.ResultFailed})

	// The change starts a run after the debounce; the operator then sleeps 4s, during which
	// the management API server goes away for 3s: the run gathers, then cannot apply.
	kubectl(t, cluster.KubeconfigFile(h.kubeDir, cluster.Guest), "create", "configmap", "sample-settings", "-n", "openshift-config", "--from-literal=replicas=2")
	time.Sleep(time.Second)
	if err := hosted.RestartAPIServer(cluster.Management, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the sample Deployment with 2 replicas after the restart", func(ctx context.Context) (bool, error) {
		d, err := h.mgmtCS.AppsV1().Deployments(h.hcpNS).Get(ctx, "openshift-sample--sample", metav1.GetOptions{})
		return err == nil && *d.Spec.Replicas == 2, err
	})
	settle(t, p, sampleOp, auditOp)
	f := p.metrics(t)
	if failed := sum(f, "topolayer_operator_runs_total", map[string]string{"operator": sampleOp, "result": manager.ResultFailed}) - failedBefore; failed < 1 {
		t.Errorf("no run of %s failed while the management API server was down: the restart missed the run", sampleOp)
	}
	st, err := h.mgmtCS.CoreV1().ConfigMaps(h.hcpNS).Get(ctx, manager.StatusName(sampleOp), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Data["result"] != manager.ResultSucceeded {
		t.Errorf("the last run did not succeed:\n%s", st.Data["status.yaml"])
	}

	// Each standalone object the operator wrote exists once in the HCP namespace.
	seen := map[string]string{}
	for _, gvr := range placedResources[cluster.Management] {
		list, err := h.mgmtDyn.Resource(gvr).Namespace(h.hcpNS).List(ctx, metav1.ListOptions{LabelSelector: namespaces.LabelOperator + "=" + sampleOp})
		if err != nil {
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		for _, o := range list.Items {
			a := o.GetAnnotations()
			source := gvr.Resource + " " + a[namespaces.AnnotationStandaloneNamespace] + "/" + a[namespaces.AnnotationStandaloneName]
			if other, dup := seen[source]; dup {
				t.Errorf("%s written twice: %s and %s", source, other, o.GetName())
			}
			seen[source] = o.GetName()
		}
	}
	// What the sample operator places from nothing: its Deployment, Service, ServiceAccount
	// and ConfigMap, its ClusterOperator, the guest kubeconfig of its operand and its status
	// object. What earlier tests left on the shared guest (a Sample CR) adds to it.
	if len(seen) < 7 {
		t.Errorf("found %d objects of %s in %s, want at least 7: %v", len(seen), sampleOp, h.hcpNS, seen)
	}
}
