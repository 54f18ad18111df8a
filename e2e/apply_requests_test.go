package e2e

import (
	"errors"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/topolayer/topolayer/contract"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// request is one HTTP request a target sent.
type request struct {
	method, path string
	dryRun       bool
}

func (r request) String() string {
	if r.dryRun {
		return r.method + " " + r.path + " (dry-run)"
	}
	return r.method + " " + r.path
}

// countingLog records the requests sent through the rest.Configs it wraps while it is on.
type countingLog struct {
	mu   sync.Mutex
	on   bool
	sent []request
}

func (l *countingLog) wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			l.mu.Lock()
			if l.on {
				l.sent = append(l.sent, request{method: r.Method, path: r.URL.Path, dryRun: r.URL.Query().Get("dryRun") != ""})
			}
			l.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

// record turns recording on, dropping what was recorded, or off.
func (l *countingLog) record(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on, l.sent = on, nil
}

func (l *countingLog) requests() []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sent)
}

// byMethod counts requests by method, a dry-run apart.
func byMethod(rs []request) map[string]int {
	out := map[string]int{}
	for _, r := range rs {
		k := r.method
		if r.dryRun {
			k += " dry-run"
		}
		out[k]++
	}
	return out
}

// TestApplyRequestCount applies a hosted plan, then the same plan again with the same
// targets, and counts the HTTP requests of each: re-applying an unchanged plan costs at most
// one request per entry (the read that shows the object unchanged) and no mutating request.
func TestApplyRequestCount(t *testing.T) {
	const operator = "e2e-requests"
	cm := func(name string) string { return configMap(name, "k: v") }
	apl := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", "openshift-sample", "requests-apply", cm("requests-apply"))
	apl.Metadata.FieldManager = "e2e-requests"
	apl.Options = []byte("fieldManager: e2e-requests\nforce: true\n")
	// The Deployment's namespace is its own: its guest identity's namespace is created on the
	// guest as this test's operator's, which another operator's plan could not then write.
	deploy := mutation(contract.ClassManagement, contract.ActionApply, "apps/v1/deployments", "openshift-e2e-requests", "requests-web", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: requests-web
  namespace: openshift-e2e-requests
spec:
  replicas: 1
  selector:
    matchLabels: {app: requests-web}
  template:
    metadata:
      labels: {app: requests-web}
    spec:
      nodeSelector: {node-role.kubernetes.io/master: ""}
      containers:
      - name: web
        image: registry.example/web:1
        args: [--port=8443]
        ports:
        - containerPort: 8443
          name: https
`)
	deploy.Metadata.FieldManager = "e2e-requests"
	patch := mutation(contract.ClassManagement, contract.ActionPatch, "/v1/configmaps", "openshift-sample", "requests-create", `{"data":{"k":"v"}}`)
	patch.Metadata.PatchType = contract.PatchTypeMerge
	status := mutation(contract.ClassManagement, contract.ActionApplyStatus, "operator.openshift.io/v1/authentications", "", "requests-auth",
		authentication("requests-auth", "status:\n  readyReplicas: 1\n"))
	status.Metadata.FieldManager = "e2e-requests-status"
	plan := hostedPlan(t, operator, nil,
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "openshift-sample", "requests-create", cm("requests-create")),
		mutation(contract.ClassManagement, contract.ActionUpdate, "/v1/configmaps", "openshift-sample", "requests-create", cm("requests-create")),
		patch,
		apl,
		deploy,
		mutation(contract.ClassManagement, contract.ActionCreate, "operator.openshift.io/v1/authentications", "", "requests-auth",
			authentication("requests-auth", "spec:\n  managementState: Managed\n")),
		status,
		mutation(contract.ClassManagement, contract.ActionUpdateStatus, "operator.openshift.io/v1/authentications", "", "requests-auth",
			authentication("requests-auth", "spec:\n  managementState: Managed\nstatus:\n  readyReplicas: 1\n")),
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/events", "openshift-sample-operator", "requests.1",
			"apiVersion: v1\nkind: Event\nmetadata:\n  name: requests.1\n  namespace: openshift-sample-operator\ninvolvedObject: {kind: ConfigMap, name: requests-create, namespace: openshift-sample}\nreason: Created\n"),
		mutation(contract.ClassUserWorkload, contract.ActionCreate, "rbac.authorization.k8s.io/v1/clusterroles", "", "e2e-requests",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: e2e-requests\nrules:\n- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n"),
	)

	// The targets are built once, from the wrapped configs: discovery and the
	// HostedControlPlane are read before the log records.
	log := &countingLog{}
	hcp := hosted.HostedControlPlane()
	mgmtCfg, guestCfg := log.wrap(hosted.Config(cluster.Management)), log.wrap(hosted.Config(cluster.Guest))
	owner, err := hypershift.ResolveHostedControlPlane(t.Context(), mgmtCfg, hcp.Namespace, hcp.HostedControlPlane)
	if err != nil {
		t.Fatal(err)
	}
	mgmt, err := apply.NewClusterTarget(cluster.Management, mgmtCfg, apply.Options{Namespace: hcp.Namespace, Operator: operator, HostedControlPlane: owner, RequireOwnership: true})
	if err != nil {
		t.Fatal(err)
	}
	guest, err := apply.NewClusterTarget(cluster.Guest, guestCfg, apply.Options{Operator: operator, RequireOwnership: true})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]apply.Target{cluster.Management: mgmt, cluster.Guest: guest}
	log.record(true)
	res := mustApply(t, plan, targets)
	first, discovery := withoutDiscovery(log.requests())
	t.Logf("first apply: %d discovery requests (once per target)", discovery)
	for _, r := range res {
		// The Update, Patch and UpdateStatus write what the Create and ApplyStatus before
		// them did.
		if r.Status != apply.StatusApplied && r.Status != apply.StatusSkipped {
			t.Errorf("first apply: %s %s: %s", r.Action, r.Identity, r.Status)
		}
	}
	log.record(true)
	res = mustApply(t, plan, targets)
	second := log.requests()
	log.record(false)
	// The targets were built once: discovery is not asked again, and counts if it were.

	t.Logf("%d entries; first apply: %d requests %v; second apply: %d requests %v", len(res), len(first), byMethod(first), len(second), byMethod(second))
	for _, r := range res {
		if r.Status != apply.StatusSkipped {
			t.Errorf("second apply: %s %s: %s, want skipped", r.Action, r.Identity, r.Status)
		}
	}
	// Per object (the Create, ApplyStatus and UpdateStatus of requests-auth share one).
	// A POST names its object in its body: the first apply's POSTs are in the totals only.
	entries := map[string][]string{}
	var objects []string
	for _, r := range res {
		key := r.Cluster + "/" + r.Identity.Name
		if entries[key] == nil {
			objects = append(objects, key)
		}
		entries[key] = append(entries[key], string(r.Action))
	}
	for _, key := range objects {
		name := path.Base(key)
		var mine1, mine2 []string
		for _, q := range first {
			if sentFor(q, name) {
				mine1 = append(mine1, q.String())
			}
		}
		for _, q := range second {
			if sentFor(q, name) {
				mine2 = append(mine2, q.String())
			}
		}
		t.Logf("%s %v: first apply %d %v; second apply %d %v", key, entries[key], len(mine1), mine1, len(mine2), mine2)
	}
	if len(second) > len(res) {
		t.Errorf("the second apply sent %d requests for %d entries, want at most one per entry: %v", len(second), len(res), second)
	}
	var mutating []string
	for _, q := range second {
		if q.method != http.MethodGet && q.method != http.MethodHead {
			mutating = append(mutating, q.String())
		}
	}
	if len(mutating) != 0 {
		t.Errorf("the second apply sent %d mutating requests (dry-runs included), want 0: %v", len(mutating), mutating)
	}
	for _, r := range res {
		if r.Cluster == cluster.Management && r.Identity.Resource == "deployments" {
			checkOwned(t, r.Object, contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "openshift-e2e-requests", Name: "requests-web"}, operator, true)
		}
	}
}

// sentFor reports whether a request is about the object named name: its path names it.
// (A POST names its object in its body, not its path: the first apply's POSTs are counted
// in the totals only.)
func sentFor(q request, name string) bool {
	return path.Base(strings.TrimSuffix(q.path, "/status")) == name
}

// withoutDiscovery returns the requests that are not discovery (/api, /apis, a group
// version, /openapi), and how many were.
func withoutDiscovery(rs []request) ([]request, int) {
	var out []request
	for _, r := range rs {
		parts := strings.Split(strings.Trim(r.path, "/"), "/")
		discovery := strings.HasPrefix(r.path, "/openapi") ||
			(parts[0] == "api" && len(parts) <= 2) || (parts[0] == "apis" && len(parts) <= 3)
		if !discovery {
			out = append(out, r)
		}
	}
	return out, len(rs) - len(out)
}

// TestApplyChangedRequestCount: a plan that changes one object sends that write alone (a
// plan of one write validates itself: no dry-run), and a server-side apply of an object the
// target wrote last sends no read: it carries the resourceVersion its last write left as a
// precondition. When someone else changed the object since, the precondition fails, and the
// target reads the object, decides again and writes: an object someone else now holds is not
// taken over on the strength of an old write. An object removed since is created again by
// the apply (the server does not hold a removed object's resourceVersion against a create),
// as the read would have decided.
func TestApplyChangedRequestCount(t *testing.T) {
	const operator = "e2e-changed"
	hcp := hosted.HostedControlPlane()
	log := &countingLog{}
	mgmtCfg := log.wrap(hosted.Config(cluster.Management))
	mgmt, err := apply.NewClusterTarget(cluster.Management, mgmtCfg, apply.Options{Namespace: hcp.Namespace, Operator: operator, RequireOwnership: true})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]apply.Target{cluster.Management: mgmt}
	planOf := func(value string) *plans.Plan {
		m := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", "openshift-sample", "changed-apply", configMap("changed-apply", "k: \""+value+"\""))
		m.Options = []byte("fieldManager: e2e-changed\nforce: true\n")
		return hostedPlan(t, operator, nil, m)
	}
	applyOnce := func(value string) ([]request, apply.EntryResult) {
		t.Helper()
		log.record(true)
		res := mustApply(t, planOf(value), targets)
		sent, _ := withoutDiscovery(log.requests())
		log.record(false)
		if len(res) != 1 {
			t.Fatalf("results %+v", res)
		}
		return sent, res[0]
	}
	cs, err := kubernetes.NewForConfig(hosted.Config(cluster.Management))
	if err != nil {
		t.Fatal(err)
	}
	// The object's name on the management cluster: the plan's, whatever the translation made
	// of the standalone name.
	id := planOf("0").Entries[0].Mutation.Identity()
	live := func() map[string]string {
		t.Helper()
		cm, err := cs.CoreV1().ConfigMaps(id.Namespace).Get(t.Context(), id.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data
	}

	for _, step := range []struct {
		name   string
		before func()
		value  string
		want   []string // method (and dry-run) of each request, in order
		status apply.Status
	}{
		{name: "created: a read, then the write alone", value: "1", want: []string{"GET", "PATCH"}, status: apply.StatusApplied},
		{name: "changed: the write alone, no read", value: "2", want: []string{"PATCH"}, status: apply.StatusApplied},
		{name: "unchanged: a read, no write", value: "2", want: []string{"GET"}, status: apply.StatusSkipped},
		{name: "changed again after the read: the write alone", value: "3", want: []string{"PATCH"}, status: apply.StatusApplied},
		{
			name: "someone else changed it: the precondition fails, read, written",
			before: func() {
				patch := []byte(`{"data":{"other":"kept"}}`)
				if _, err := cs.CoreV1().ConfigMaps(id.Namespace).Patch(t.Context(), id.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
					t.Fatal(err)
				}
			},
			value: "4", want: []string{"PATCH", "GET", "PATCH"}, status: apply.StatusApplied,
		},
		{
			name: "someone else removed it: created again by the write alone",
			before: func() {
				if err := cs.CoreV1().ConfigMaps(id.Namespace).Delete(t.Context(), id.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			value: "5", want: []string{"PATCH"}, status: apply.StatusApplied,
		},
	} {
		if step.before != nil {
			step.before()
		}
		sent, res := applyOnce(step.value)
		var got []string
		for _, q := range sent {
			got = append(got, strings.TrimSuffix(q.method+" "+map[bool]string{true: "dry-run"}[q.dryRun], " "))
		}
		if !slices.Equal(got, step.want) || res.Status != step.status {
			t.Errorf("%s: requests %v and %s (%v), want %v and %s", step.name, sent, res.Status, res.Err, step.want, step.status)
		}
		if v := live()["k"]; v != step.value {
			t.Errorf("%s: the live object holds k=%q, want %q", step.name, v, step.value)
		}
	}
	if v := live()["other"]; v != "" {
		// The object was removed and created again after the other writer's field.
		t.Errorf("a field of the object removed came back: other=%q", v)
	}

	// A plan of two writes is validated whole, by dry-runs: the dry-run of the remembered
	// object that someone changed since fails its precondition, and the object is read and
	// asked again; nothing is refused.
	patch := []byte(`{"data":{"other":"again"}}`)
	if _, err := cs.CoreV1().ConfigMaps(id.Namespace).Patch(t.Context(), id.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	second := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", "openshift-sample", "changed-second", configMap("changed-second", `k: "x"`))
	second.Options = []byte("fieldManager: e2e-changed\nforce: true\n")
	first := mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", "openshift-sample", "changed-apply", configMap("changed-apply", `k: "7"`))
	first.Options = second.Options
	log.record(true)
	res := mustApply(t, hostedPlan(t, operator, nil, first, second), targets)
	sent, _ := withoutDiscovery(log.requests())
	log.record(false)
	t.Logf("two writes, one remembered and changed since: %v", sent)
	if v := live()["k"]; v != "7" || len(res) != 2 || res[0].Status != apply.StatusApplied || res[1].Status != apply.StatusApplied {
		t.Errorf("two writes, one remembered and changed since: k=%q, %+v", v, res)
	}

	// Someone else's object now stands where the target's was: the precondition fails, the
	// read shows an object without the operator's mark, and the write is refused.
	if err := cs.CoreV1().ConfigMaps(id.Namespace).Delete(t.Context(), id.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: id.Name, Namespace: id.Namespace}, Data: map[string]string{"k": "theirs"}}
	if _, err := cs.CoreV1().ConfigMaps(id.Namespace).Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log.record(true)
	res, err = apply.ApplyPlan(t.Context(), planOf("6"), targets)
	sent, _ = withoutDiscovery(log.requests())
	log.record(false)
	var conflict *apply.ConflictError
	if err == nil || len(res) != 1 || !errors.As(res[0].Err, &conflict) {
		t.Errorf("someone else's object: %v, %+v; want a conflict", err, res)
	}
	t.Logf("someone else's object: requests %v: %v", sent, err)
	if v := live()["k"]; v != "theirs" {
		t.Errorf("someone else's object was written: k=%q", v)
	}
}
