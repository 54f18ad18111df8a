package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/namespaces"
)

// configMapOperator is an in-process operator that reads the ConfigMap namespace/name (when
// reads) and writes it, Management class, with data computed by data from what it read
// ("" when absent).
func configMapOperator(op, namespace, name string, reads bool, data func(read string) string) manager.Operator {
	id := contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: namespace, Name: name}
	inputs := &contract.InputResources{}
	if reads {
		inputs.ApplyConfigurationResources.ExactResources = []contract.ExactResourceID{id}
	}
	outputs := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{id}}}
	fn := fromValue(name, "", func(read string) []contract.Mutation {
		m := valueConfigMap(namespace, name, data(read))
		// Forced, as operators apply: the object is taken back from whoever edited it.
		m.Options = []byte("force: true\n")
		return []contract.Mutation{m}
	})
	return manager.Operator{Name: op, Runner: &runner.InProcess{Name: op, Func: fn, Inputs: inputs, Outputs: outputs}}
}

// startManager runs ops through manager.AddToManager for the hosted control plane of cfg,
// with metrics in a registry of the test's, until the test ends.
func startManager(t *testing.T, cfg *config.TopologyConfig, ops []manager.Operator) (*manager.Manager, *prometheus.Registry, error) {
	t.Helper()
	return startManagerWith(t, cfg, ops, faultManagerOptions{})
}

// startManagerWith is startManager on the clusters and in the work directory of o, each the
// shared environment's or a temporary directory where o leaves it unset. It returns the
// error of manager.AddToManager, and starts nothing then.
func startManagerWith(t *testing.T, cfg *config.TopologyConfig, ops []manager.Operator, o faultManagerOptions) (*manager.Manager, *prometheus.Registry, error) {
	t.Helper()
	if o.guest == nil {
		o.guest = hosted.Config(cluster.Guest)
	}
	if o.workDir == "" {
		o.workDir = t.TempDir()
	}
	if o.management == nil {
		o.management = hosted.Config(cluster.Management)
	}
	reg := prometheus.NewRegistry()
	mgr := newManager(t, o.management, cfg.Topology.Hosted.Namespace)
	m, err := manager.AddToManager(t.Context(), mgr, manager.EmbedOptions{Topology: mustTopology(t, cfg), Clusters: map[string]*rest.Config{cluster.Guest: o.guest}, Operators: ops, WorkDir: o.workDir, Registerer: reg})
	if err != nil {
		return nil, nil, err
	}
	runUntilCleanup(t, t.Context(), mgr)
	return m, reg, nil
}

// gathered sums a metric of reg over the samples labelled operator=op.
func gathered(t *testing.T, reg *prometheus.Registry, name, op string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			var n float64
			for _, s := range f.GetMetric() {
				for _, l := range s.GetLabel() {
					if l.GetName() == "operator" && l.GetValue() == op {
						n += s.GetCounter().GetValue()
					}
				}
			}
			return n
		}
	}
	return 0
}

// eventReasons lists the reasons of the events in namespace about op's status object.
func eventReasons(t *testing.T, namespace, op string) map[string]string {
	t.Helper()
	cs, _ := clients(t, hosted.Config(cluster.Management))
	list, err := cs.EventsV1().Events(namespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range list.Items {
		if e.Regarding.Name == manager.StatusName(op) {
			out[e.Reason] = e.Note
		}
	}
	return out
}

// TestManagerConflicts: two operators that declare the same output do not start; an object
// that another operator wrote is not overwritten, and the conflict is reported.
func TestManagerConflicts(t *testing.T) {
	cfg := managedHostedControlPlane(t, "conflicts")
	hcpNS := cfg.Topology.Hosted.Namespace
	constant := func(string) string { return "mine" }

	t.Run("declared at start-up", func(t *testing.T) {
		_, _, err := startManager(t, cfg, []manager.Operator{
			configMapOperator("first", "openshift-shared", "settings", false, constant),
			configMapOperator("second", "openshift-shared", "settings", false, constant),
		})
		if err == nil || !strings.Contains(err.Error(), "conflict") || !strings.Contains(err.Error(), "openshift-shared/settings") {
			t.Fatalf("AddToManager: %v, want a conflict on openshift-shared/settings", err)
		}
	})

	t.Run("written at run time", func(t *testing.T) {
		// Another operator's object, where "claimer" will write.
		cs, _ := clients(t, hosted.Config(cluster.Management))
		theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "openshift-claimed--settings", Namespace: hcpNS,
			Labels: map[string]string{namespaces.LabelOperator: "another-operator"},
			Annotations: map[string]string{
				namespaces.AnnotationStandaloneResource:  "configmaps",
				namespaces.AnnotationStandaloneNamespace: "openshift-claimed",
				namespaces.AnnotationStandaloneName:      "settings",
			},
		}, Data: map[string]string{"value": "theirs"}}
		if _, err := cs.CoreV1().ConfigMaps(hcpNS).Create(t.Context(), theirs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, reg, err := startManager(t, cfg, []manager.Operator{configMapOperator("claimer", "openshift-claimed", "settings", false, constant)})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the conflict reported", func(context.Context) (bool, error) {
			return gathered(t, reg, "topolayer_operator_conflicts_total", "claimer") >= 1 && eventReasons(t, hcpNS, "claimer")["Conflict"] != "", nil
		})
		st, err := cs.CoreV1().ConfigMaps(hcpNS).Get(t.Context(), manager.StatusName("claimer"), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Data["result"] != manager.ResultFailed || !strings.Contains(st.Data["status.yaml"], "another-operator") {
			t.Errorf("status of claimer:\n%s", st.Data["status.yaml"])
		}
		got, err := cs.CoreV1().ConfigMaps(hcpNS).Get(t.Context(), theirs.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Data["value"] != "theirs" || got.Labels[namespaces.LabelOperator] != "another-operator" {
			t.Errorf("the other operator's object was changed: %v %v", got.Labels, got.Data)
		}
		t.Logf("Conflict event: %s", eventReasons(t, hcpNS, "claimer")["Conflict"])
	})
}

// TestManagerHotLoop: an operator whose every run changes what it reads (a counter it
// increments) is detected after hotLoopThreshold self-triggered runs, reported, and damped.
func TestManagerHotLoop(t *testing.T) {
	cfg := managedHostedControlPlane(t, "hotloop")
	cfg.Scheduler.HotLoopThreshold = 3
	hcpNS := cfg.Topology.Hosted.Namespace
	increment := func(read string) string {
		n, _ := strconv.Atoi(read)
		return strconv.Itoa(n + 1)
	}
	_, reg, err := startManager(t, cfg, []manager.Operator{configMapOperator("counter", "openshift-counter", "count", true, increment)})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the hot loop detected and reported", func(context.Context) (bool, error) {
		return gathered(t, reg, "topolayer_scheduler_hot_loops_total", "counter") >= 1 && eventReasons(t, hcpNS, "counter")["HotLoop"] != "", nil
	})
	t.Logf("HotLoop event: %s", eventReasons(t, hcpNS, "counter")["HotLoop"])

	// Damped: the next run waits for the hot-loop backoff (10s at first), where it would
	// otherwise follow every write within the 100ms debounce.
	runs := gathered(t, reg, "topolayer_operator_runs_total", "counter")
	time.Sleep(3 * time.Second)
	if more := gathered(t, reg, "topolayer_operator_runs_total", "counter") - runs; more > 1 {
		t.Errorf("%v runs in the 3s after the hot loop was detected, want at most 1 (damped)", more)
	}
}
