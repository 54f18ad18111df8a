package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/topology"
)

// TestRunRequestsForChange runs topolayer run (standalone, both sample operators) against
// the API server, then changes an input in a way that changes none of the operators'
// outputs, and counts the requests topolayer sends for the runs that follow (its client
// metrics): no mutating request (no write, no dry-run, no status object, no event), and a
// GET only for the plan entries whose objects the manager's informers do not hold (their
// resource or namespace is no input's): an entry that the cache shows unchanged costs
// nothing.
func TestRunRequestsForChange(t *testing.T) {
	s := newStandaloneSample(t)
	// No leader election: its lease renewals would be writes of their own.
	p := startRun(t, "--config", s.cfgFile, "--leader-elect=false", "-v", "1", "--kubeconfig", cluster.KubeconfigFile(s.kubeDir, cluster.Single))
	kubectl(t, cluster.KubeconfigFile(s.kubeDir, cluster.Single), "create", "configmap", "sample-settings", "-n", "openshift-config", "--from-literal=replicas=2")
	eventually(t, "the sample Deployment", func(ctx context.Context) (bool, error) {
		_, err := s.cs.AppsV1().Deployments("openshift-sample").Get(ctx, "sample", metav1.GetOptions{})
		return err == nil, err
	})
	before := settle(t, p, sampleOp, auditOp)
	requests := func() map[string]float64 {
		f := p.metrics(t)
		out := map[string]float64{}
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			out[m] = sum(f, "rest_client_requests_total", map[string]string{"method": m})
		}
		return out
	}
	start := requests()

	// A change of an input that no operator's output depends on.
	if _, err := s.cs.CoreV1().ConfigMaps("openshift-config").Patch(t.Context(), "sample-settings", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"topolayer.dev/e2e-touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a run of the sample operator for the change", func(context.Context) (bool, error) {
		return p.runs(t, sampleOp)[manager.TriggerChange] > before[sampleOp][manager.TriggerChange], nil
	})
	after := settle(t, p, sampleOp, auditOp)
	end := requests()

	mutating := 0.0
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		mutating += end[m] - start[m]
	}
	gets := end["GET"] - start["GET"]
	uncached := uncachedEntries(t, s.cfg, s.cfgFile, p.workDir(t), before, after)
	t.Logf("after a change that changes no output: %v mutating requests, %v GETs; %d plan entries whose objects are not cached", mutating, gets, uncached)
	if mutating != 0 {
		t.Errorf("%v mutating requests for runs that change nothing, want 0", mutating)
	}
	if gets > float64(uncached) {
		t.Errorf("%v GETs, want at most %d (one per entry the informers do not hold)", gets, uncached)
	}
}

// workDir is the --work-dir of the process.
func (p *runProcess) workDir(t *testing.T) string {
	t.Helper()
	i := slices.Index(p.cmd.Args, "--work-dir")
	if i < 0 || i+1 >= len(p.cmd.Args) {
		t.Fatal("the process has no --work-dir")
	}
	return p.cmd.Args[i+1]
}

// uncachedEntries counts the plan entries, events aside, of the last runs of the operators
// that ran between before and after whose resource and namespace no watch of the manager
// reads: each of them costs a GET even when unchanged.
func uncachedEntries(t *testing.T, cfg *config.TopologyConfig, cfgFile, workDir string, before, after map[string]runCounts) int {
	t.Helper()
	topo, err := topology.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	decl, err := manager.Declare(t.Context(), manager.OperatorsFromConfig(cfg, filepath.Dir(cfgFile)))
	if err != nil {
		t.Fatal(err)
	}
	watches, err := manager.Watches(topo, decl)
	if err != nil {
		t.Fatal(err)
	}
	watched := func(id contract.Identity) bool {
		for _, w := range watches {
			if w.Resource == id.GroupVersionResource() && (w.Namespaces == nil || slices.Contains(w.Namespaces, id.Namespace)) {
				return true
			}
		}
		return false
	}
	n := 0
	for op, counts := range after {
		if counts[manager.TriggerChange] == before[op][manager.TriggerChange] && counts[manager.TriggerOwnWrites] == before[op][manager.TriggerOwnWrites] {
			continue
		}
		out, err := contract.ReadOutputDir(filepath.Join(workDir, op, manager.LastSucceeded, "output"), contract.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Mutations {
			if id := m.Identity(); !id.IsEvent() && !watched(id) {
				n++
			}
		}
	}
	return n
}
