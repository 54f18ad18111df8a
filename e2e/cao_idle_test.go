package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/namespaces"
)

// idleRuns is how many runs on unchanged inputs TestRealCAOIdle watches (issue 31's
// acceptance: 20 runs with no input change add no Event, no CSR, and rewrite no status).
const idleRuns = 20

// idleResync is the resync period of the idle tests: short, so that idleRuns runs take a
// few minutes.
var idleResync = &metav1.Duration{Duration: 2 * time.Second}

// caoDegradedInertia is how long a degraded condition of CAO's lasts before its
// ClusterOperator says Degraded (library-go's status inertia: about two minutes, as the
// real CAO was seen to do).
const caoDegradedInertia = 2 * time.Minute

// statusObject names an object whose status the operator writes, to see whether idle runs
// rewrite it (its resourceVersion).
type statusObject struct {
	client dynamic.Interface
	gvr    schema.GroupVersionResource
	ns     string
	name   string
}

// idleSnapshot is what idle runs must not add to: Events per place, CSRs, the
// resourceVersions of the status objects, the manager's mutating requests.
type idleSnapshot struct {
	events   map[string]int
	csrs     int
	versions map[string]string
	objects  map[string]map[string]any // the status objects' status, by key
	mutating float64
}

// eventPlace is where Events are counted: a cluster's namespace ("" for all).
type eventPlace struct {
	name string
	cs   kubernetes.Interface
	ns   string
}

func snapshotIdle(t *testing.T, p *runProcess, places []eventPlace, csrs kubernetes.Interface, status []statusObject) idleSnapshot {
	t.Helper()
	s := idleSnapshot{events: map[string]int{}, versions: map[string]string{}, objects: map[string]map[string]any{}, mutating: p.mutatingRequests(t)}
	for _, pl := range places {
		evs, err := pl.cs.CoreV1().Events(pl.ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.events[pl.name] = len(evs.Items)
	}
	list, err := csrs.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.csrs = len(list.Items)
	for _, o := range status {
		key := fmt.Sprintf("%s %s/%s", o.gvr.GroupResource(), o.ns, o.name)
		got, err := o.client.Resource(o.gvr).Namespace(o.ns).Get(t.Context(), o.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			s.versions[key] = "absent"
		case err != nil:
			t.Fatal(err)
		default:
			s.versions[key] = got.GetResourceVersion()
			s.objects[key], _, _ = unstructured.NestedMap(got.Object, "status")
		}
	}
	return s
}

// checkIdle lets the operator, started at started, settle under its resync period, then
// watches idleRuns resync runs and fails on any Event, CSR, status rewrite or mutating
// request they add.
func checkIdle(t *testing.T, p *runProcess, started time.Time, op string, places []eventPlace, csrs kubernetes.Interface, status []statusObject) {
	t.Helper()
	// Settled: no mutating request over three resync runs in a row, and CAO's degraded
	// inertia past: a degraded condition becomes the ClusterOperator's Degraded=True only
	// once it lasted that long, a real transition (a resident operator writes it too).
	// The conditions are set in the first runs, some seconds after the start.
	quietResyncs(t, p, op, 3, started.Add(caoDegradedInertia+30*time.Second))
	runs := p.runs(t, op)
	before := snapshotIdle(t, p, places, csrs, status)
	start := time.Now()
	eventuallyWithin(t, fmt.Sprintf("%d resync runs", idleRuns), 6*time.Minute, func(context.Context) (bool, error) {
		return p.runs(t, op)[manager.TriggerResync] >= runs[manager.TriggerResync]+idleRuns, nil
	})
	after := snapshotIdle(t, p, places, csrs, status)
	now := p.runs(t, op)
	t.Logf("%v resync runs in %s (runs before %v, after %v)", now[manager.TriggerResync]-runs[manager.TriggerResync], time.Since(start).Round(time.Second), runs, now)
	for _, pl := range places {
		n := after.events[pl.name] - before.events[pl.name]
		t.Logf("Events added in %s: %d (%d before)", pl.name, n, before.events[pl.name])
		if n != 0 {
			t.Errorf("%d Events added in %s by %d runs with no input change, want 0", n, pl.name, idleRuns)
		}
	}
	t.Logf("CSRs added: %d; mutating requests: %v", after.csrs-before.csrs, after.mutating-before.mutating)
	if n := after.csrs - before.csrs; n != 0 {
		t.Errorf("%d CertificateSigningRequests added by %d runs with no input change, want 0", n, idleRuns)
	}
	for key, v := range before.versions {
		t.Logf("%s: resourceVersion %s -> %s", key, v, after.versions[key])
		if after.versions[key] != v {
			t.Errorf("%s rewritten by runs with no input change (resourceVersion %s -> %s); its status (-before +after):\n%s", key, v, after.versions[key], cmp.Diff(before.objects[key], after.objects[key]))
		}
	}
	if d := after.mutating - before.mutating; d != 0 {
		t.Errorf("%v mutating requests in %d runs with no input change, want 0", d, idleRuns)
	}
	if now[manager.TriggerChange] != runs[manager.TriggerChange] || now[manager.TriggerOwnWrites] != runs[manager.TriggerOwnWrites] {
		t.Errorf("runs other than resyncs while nothing changed: before %v, after %v", runs, now)
	}
}

// quietResyncs waits (at most 6 minutes) until op, run under a resync period, ran n resync
// runs in a row that sent no mutating request and that no other run came between, and the
// time is past notBefore.
//
// A run's applies are counted before the run is, and the manager writes its status record
// up to manager.DefaultStatusQuiet after the run: a count taken in between would take a run
// that wrote for a quiet one. So the condition must hold for longer than that quiet period.
func quietResyncs(t *testing.T, p *runProcess, op string, n float64, notBefore time.Time) {
	t.Helper()
	var last runCounts
	var lastWrites float64
	var held time.Time // when the condition first held since the last count changed
	eventuallyWithin(t, fmt.Sprintf("%v quiet resync runs in a row", n), 6*time.Minute, func(context.Context) (bool, error) {
		now, writes := p.runs(t, op), p.mutatingRequests(t)
		// Only the resync runs that end after notBefore count.
		if last == nil || time.Now().Before(notBefore) || writes != lastWrites || now[manager.TriggerChange]+now[manager.TriggerOwnWrites] != last[manager.TriggerChange]+last[manager.TriggerOwnWrites] {
			last, lastWrites, held = now, writes, time.Time{}
			return false, nil
		}
		if now[manager.TriggerResync] < last[manager.TriggerResync]+n {
			return false, nil
		}
		if held.IsZero() {
			held = time.Now()
		}
		return time.Since(held) > manager.DefaultStatusQuiet+time.Second, nil
	})
}

// TestRealCAOIdle runs the real cluster-authentication-operator, unmodified, through the
// shipped hosted example with a short resync period, and checks that once it settled, runs
// on unchanged inputs write nothing: no Event (a repeat is folded into the one already
// written, and not even counted when the run changed nothing else), no CSR, no status
// rewritten (conditions keep their live lastTransitionTime), no mutating request at all.
// Then a login template's content changes, and the OAuth server's pods roll
// (templateChangeRolls); then it is removed, and its copy deleted (templateRemovalDeletesCopy).
func TestRealCAOIdle(t *testing.T) {
	h := setUpCAOHosted(t, "cao-idle", func(cfg *config.TopologyConfig) { cfg.Operators[0].Resync = idleResync })
	hcpNS, cfgFile, mgmt, guest := h.hcpNS, h.cfgFile, h.mgmt, h.guest

	kubeDir := writeKubeconfigs(t, hosted)
	started := time.Now()
	p := startRun(t, append([]string{"--config", cfgFile, "--leader-elect=false", "-v", "1"}, hostedKubeconfigFlags(kubeDir)...)...)
	mgmtCS, mgmtDyn := clients(t, mgmt)
	guestCS, _ := clients(t, guest)
	checkIdle(t, p, started, "cluster-authentication-operator",
		[]eventPlace{{"the HCP namespace " + hcpNS, mgmtCS, hcpNS}, {"the guest", guestCS, ""}},
		guestCS,
		[]statusObject{
			{mgmtDyn, schema.GroupVersionResource{Group: namespaces.ShadowGroup("operator.openshift.io"), Version: "v1", Resource: "authentications"}, hcpNS, "cluster"},
			{mgmtDyn, schema.GroupVersionResource{Group: namespaces.ShadowGroup("config.openshift.io"), Version: "v1", Resource: "clusteroperators"}, hcpNS, "authentication"},
		})
	templateChangeRolls(t, p, "cluster-authentication-operator", guest, mgmt, hcpNS, "openshift-authentication--oauth-openshift")
	templateRemovalDeletesCopy(t, p, "cluster-authentication-operator", guest, mgmt, hcpNS)
}

// TestRealCAOIdleStandalone is TestRealCAOIdle on one standalone cluster where the resident
// operator ran before (as TestRealCAOStandalone seeds it).
func TestRealCAOIdleStandalone(t *testing.T) {
	bin := caoBinary(t)
	if os.Getenv(corpus.EnvVar) == "" {
		t.Skipf("%s is not set: no CAO corpus for the resident operator's objects", corpus.EnvVar)
	}
	rc := standalone.Config(cluster.Single)
	cfgFile := configWith(t, filepath.Join("cluster-authentication-operator", "standalone.yaml"), func(cfg *config.TopologyConfig) {
		cfg.Operators[0].Command = []string{bin}
		cfg.Operators[0].Resync = idleResync
		cfg.Manager.Namespace = newNamespace(t, rc)
	})
	seedStandaloneCAO(t, rc)
	kubeDir := writeKubeconfigs(t, standalone)
	started := time.Now()
	p := startRun(t, "--config", cfgFile, "--leader-elect=false", "-v", "1",
		"--kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Single))
	cs, dyn := clients(t, rc)
	checkIdle(t, p, started, "cluster-authentication-operator",
		[]eventPlace{{"the cluster", cs, ""}},
		cs,
		[]statusObject{
			{dyn, schema.GroupVersionResource{Group: "operator.openshift.io", Version: "v1", Resource: "authentications"}, "", "cluster"},
			{dyn, schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusteroperators"}, "", "authentication"},
		})
	templateChangeRolls(t, p, "cluster-authentication-operator", rc, rc, "openshift-authentication", "oauth-openshift")
	templateRemovalDeletesCopy(t, p, "cluster-authentication-operator", rc, rc, "openshift-authentication")
}
