package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/routing"
)

// echoOperator is an in-process contract operator: it reads the ConfigMap
// openshift-config/<settings> and writes its data into the ConfigMap openshift-echo/<name>
// (Management) and a ClusterRole named name (UserWorkload). runs counts its runs.
func echoOperator(name, settings string, runs *atomic.Int64) manager.Operator {
	inputs := &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{ExactResources: []contract.ExactResourceID{
		{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: "openshift-config", Name: settings},
	}}}
	outputs := &contract.OutputResources{
		ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
			{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: "openshift-echo", Name: name},
		}},
		UserWorkloadResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
			{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, Name: name},
		}},
	}
	echo := fromValue(settings, "unset", func(value string) []contract.Mutation {
		return []contract.Mutation{
			valueConfigMap("openshift-echo", name, value),
			mutation(contract.ClassUserWorkload, contract.ActionApply, "rbac.authorization.k8s.io/v1/clusterroles", "", name,
				"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: "+name+"}\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n"),
		}
	})
	fn := func(ctx context.Context, req runner.Request) error {
		runs.Add(1)
		return echo(ctx, req)
	}
	return manager.Operator{Name: name, Runner: &runner.InProcess{Name: name, Func: fn, Inputs: inputs, Outputs: outputs}}
}

// inputValue reads the input directory dir and returns the data.value of the ConfigMap named
// name in it, what the in-process operators of these tests compute their outputs from; def
// when the directory holds no such ConfigMap or the ConfigMap has no value.
func inputValue(dir, name, def string) (string, error) {
	in, err := contract.ReadInputDir(dir, contract.ReadOptions{})
	if err != nil {
		return "", err
	}
	for _, o := range in.Objects() {
		if o.Resource == "configmaps" && o.Object.GetName() == name {
			if v, ok, _ := unstructured.NestedString(o.Object.Object, "data", "value"); ok {
				return v, nil
			}
		}
	}
	return def, nil
}

// fromValue is the run of an in-process operator whose outputs follow one value: it reads
// the value of the ConfigMap named name in its input directory (def without one, see
// inputValue) and writes the mutations write computes from it.
func fromValue(name, def string, write func(value string) []contract.Mutation) func(context.Context, runner.Request) error {
	return func(_ context.Context, req runner.Request) error {
		value, err := inputValue(req.InputDir, name, def)
		if err != nil {
			return err
		}
		return contract.WriteOutputDir(req.OutputDir, &contract.OutputDir{Mutations: write(value)}, contract.WriteOptions{})
	}
}

// valueConfigMap is the Management Apply of the ConfigMap namespace/name holding value as
// data.value, what the in-process operators of these tests write.
func valueConfigMap(namespace, name, value string) contract.Mutation {
	return mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", namespace, name,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: "+namespace+"}\ndata: {value: \""+value+"\"}\n")
}

// TestManagerHosted runs two in-process operators through manager.AddToManager on a hosted
// control plane of the test's own: their first runs place their outputs, a change of the
// input one of them reads runs exactly that one and reaches the management cluster, and
// the status objects say what happened.
func TestManagerHosted(t *testing.T) {
	cfg, _ := ownHostedControlPlane(t, "manager")
	cfg.Scheduler.Debounce.Duration = 200 * time.Millisecond
	cfg.Scheduler.Cooldown.Duration = 0
	hcpNS := cfg.Topology.Hosted.Namespace
	sfx := uniqueSuffix(t)
	a, b := "echo-a-"+sfx, "echo-b-"+sfx
	var runsA, runsB atomic.Int64
	ops := []manager.Operator{echoOperator(a, "settings-a-"+sfx, &runsA), echoOperator(b, "settings-b-"+sfx, &runsB)}

	guestCS, _ := clients(t, hosted.Config(cluster.Guest))
	ctx := t.Context()
	for _, ns := range []string{"openshift-config"} {
		if _, err := guestCS.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	settingsA := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings-a-" + sfx, Namespace: "openshift-config"}, Data: map[string]string{"value": "one"}}
	if _, err := guestCS.CoreV1().ConfigMaps("openshift-config").Create(ctx, settingsA, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	mgr := newManager(t, hosted.Config(cluster.Management), hcpNS)
	m, err := manager.AddToManager(ctx, mgr, manager.EmbedOptions{Topology: mustTopology(t, cfg), Clusters: map[string]*rest.Config{cluster.Guest: hosted.Config(cluster.Guest)}, Operators: ops, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, ctx, mgr)

	mgmtCS, _ := clients(t, hosted.Config(cluster.Management))
	echoed := func(op string) (string, error) {
		cm, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(ctx, "openshift-echo--"+op, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return cm.Data["value"], nil
	}
	waitFor := func(what string, cond func() (bool, error)) {
		t.Helper()
		if err := poll(ctx, 100*time.Millisecond, 30*time.Second, func(context.Context) (bool, error) { return cond() }); err != nil {
			t.Fatalf("%s: %v (status a: %+v, b: %+v)", what, err, m.Status(a), m.Status(b))
		}
	}
	waitFor("first runs", func() (bool, error) {
		va, err := echoed(a)
		if err != nil {
			return false, err
		}
		vb, err := echoed(b)
		return va == "one" && vb == "unset", err
	})
	// A plan's entries are written one after the other: the management ConfigMaps can be
	// there before the guest's ClusterRoles.
	waitFor("the ClusterRoles on the guest", func() (bool, error) {
		for _, op := range []string{a, b} {
			if _, err := guestCS.RbacV1().ClusterRoles().Get(ctx, op, metav1.GetOptions{}); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	waitFor("status objects", func() (bool, error) {
		for _, op := range []string{a, b} {
			cm, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(ctx, manager.StatusName(op), metav1.GetOptions{})
			if err != nil || cm.Data["result"] != manager.ResultSucceeded {
				return false, err
			}
		}
		return true, nil
	})
	beforeA, beforeB := runsA.Load(), runsB.Load()

	// Change what a reads: only a runs, and the change lands.
	settingsA.Data["value"] = "two"
	if _, err := guestCS.CoreV1().ConfigMaps("openshift-config").Update(ctx, settingsA, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the change reaches the management cluster", func() (bool, error) {
		v, err := echoed(a)
		return v == "two", err
	})
	time.Sleep(time.Second) // let any wrongly triggered run happen
	if got := runsA.Load() - beforeA; got != 1 {
		t.Errorf("%s ran %d times for one change, want 1", a, got)
	}
	if got := runsB.Load() - beforeB; got != 0 {
		t.Errorf("%s ran %d times for a change it does not read, want 0", b, got)
	}
	// The run changed an object with the same outcome: its record is written once a's runs
	// have been quiet for the manager's StatusQuiet.
	var st *corev1.ConfigMap
	waitFor("the status names the change that caused the run", func() (bool, error) {
		var err error
		st, err = mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(ctx, manager.StatusName(a), metav1.GetOptions{})
		return err == nil && strings.Contains(st.Data["status.yaml"], "settings-a-"+sfx), err
	})
	t.Logf("status of %s:\n%s", a, st.Data["status.yaml"])
}

// newManager builds a controller-runtime manager on the management cluster of mgmt, as an
// embedder of topolayer builds it: topolayer's scheme, its cache scoped to the HCP namespace
// hcpNS, and no metrics endpoint.
func newManager(t *testing.T, mgmt *rest.Config, hcpNS string) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(mgmt, ctrl.Options{
		Scheme:  manager.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   manager.CacheOptions(nil, routing.ClusterManagement, hcpNS),
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// managedHostedControlPlane is ownHostedControlPlane for a manager the test starts: its
// scheduler runs an operator 100ms after a change, with no cooldown between runs.
func managedHostedControlPlane(t *testing.T, name string) *config.TopologyConfig {
	t.Helper()
	cfg, _ := ownHostedControlPlane(t, name)
	cfg.Scheduler.Debounce.Duration, cfg.Scheduler.Cooldown.Duration = 100*time.Millisecond, 0
	return cfg
}

// runUntilCleanup starts mgr until the end of the test, which then checks that it stopped
// cleanly.
func runUntilCleanup(t *testing.T, ctx context.Context, mgr ctrl.Manager) {
	t.Helper()
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// TestManagerRemovesItsWorkDir: a manager given no work directory makes a temporary one,
// keeps its operators' last runs there while it runs (their inputs hold the Secrets they
// read), and removes it when it stops.
func TestManagerRemovesItsWorkDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where os.MkdirTemp makes the manager's directory
	cfg := managedHostedControlPlane(t, "workdir")
	hcpNS := cfg.Topology.Hosted.Namespace
	sfx := uniqueSuffix(t)
	op := "echo-" + sfx
	var runs atomic.Int64

	mgr := newManager(t, hosted.Config(cluster.Management), hcpNS)
	if _, err := manager.AddToManager(t.Context(), mgr, manager.EmbedOptions{Topology: mustTopology(t, cfg),
		Clusters: map[string]*rest.Config{cluster.Guest: hosted.Config(cluster.Guest)}, Operators: []manager.Operator{echoOperator(op, "settings-"+sfx, &runs)},
		Registerer: prometheus.NewRegistry()}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stop()
			<-done
		}
	})

	var dirs []string
	if err := poll(t.Context(), 100*time.Millisecond, 30*time.Second, func(context.Context) (bool, error) {
		var err error
		dirs, err = filepath.Glob(filepath.Join(tmp, "topolayer-runs-*", op, manager.LastSucceeded, "input"))
		return len(dirs) == 1, err
	}); err != nil {
		t.Fatalf("no last run of %s under %s: %v (runs: %d)", op, tmp, err, runs.Load())
	}
	stop()
	stopped = true
	if err := <-done; err != nil {
		t.Errorf("manager: %v", err)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "topolayer-runs-*"))
	if err != nil || len(left) != 0 {
		t.Errorf("after the manager stopped, %v remain (%v); want its work directory %s removed", left, err, filepath.Dir(filepath.Dir(filepath.Dir(dirs[0]))))
	}
}
