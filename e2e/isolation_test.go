package e2e

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/topolayer/topolayer/contract"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/namespaces"
)

// requestLog records the requests a client configuration makes: method, path and the
// impersonated user.
type requestLog struct {
	mu   sync.Mutex
	reqs []recordedRequest
}

type recordedRequest struct {
	method, path, as string
}

// wrap returns a copy of cfg whose requests (and those of every configuration copied from
// it, impersonating ones included) are recorded.
func (l *requestLog) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			l.mu.Lock()
			l.reqs = append(l.reqs, recordedRequest{method: r.Method, path: r.URL.Path, as: r.Header.Get(transport.ImpersonateUserHeader)})
			l.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	return c
}

func (l *requestLog) all() []recordedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// discoveryPath matches the API discovery and version endpoints: no objects.
var discoveryPath = regexp.MustCompile(`^/(version|openapi/.*|api|api/v1|apis|apis/[^/]+|apis/[^/]+/[^/]+)$`)

// scopeOf says where a request path reaches: "discovery", "namespace <ns>" (objects in a
// namespace, or the namespace itself), or "cluster" (cluster-scoped objects).
func scopeOf(path string) string {
	if discoveryPath.MatchString(path) {
		return "discovery"
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// /api/v1/namespaces/NS/... or /apis/G/V/namespaces/NS/...
	i := 2
	if parts[0] == "apis" {
		i = 3
	}
	if len(parts) > i+1 && parts[i] == "namespaces" {
		return "namespace " + parts[i+1]
	}
	return "cluster"
}

// tenant is one hosted control plane with its own topolayer, whose operator's writes
// impersonate a service account that may write only in its own namespace.
type tenant struct {
	namespace string
	operator  string
	sa        string // NAMESPACE/NAME
	user      string // system:serviceaccount:NAMESPACE:NAME
	requests  *requestLog
}

// newTenant creates the tenant's hosted control plane, service account and Role, and
// starts its manager with one in-process operator that writes the Management ConfigMaps
// named by targets (standalone namespace/name), all with data value=v.
func newTenant(t *testing.T, name string, targets [][2]string) *tenant {
	t.Helper()
	cfg := managedHostedControlPlane(t, name)
	ns := cfg.Topology.Hosted.Namespace
	cs, _ := clients(t, hosted.Config(cluster.Management))
	ctx := t.Context()
	tn := &tenant{namespace: ns, operator: name + "-" + uniqueSuffix(t), sa: ns + "/operator", requests: &requestLog{}}
	var err error
	if tn.user, err = apply.ServiceAccountUser(tn.sa); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "operator"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "operator", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{hypershift.HostedControlPlaneGVR().Group}, Resources: []string{hypershift.HostedControlPlaneGVR().Resource}, Verbs: []string{"get"}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "operator", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "operator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "operator", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, cs, tn.user, ns, "create", "configmaps", true)

	var ids []contract.ExactResourceID
	for _, tg := range targets {
		ids = append(ids, contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: tg[0], Name: tg[1]})
	}
	fn := func(ctx context.Context, req runner.Request) error {
		var ms []contract.Mutation
		for _, tg := range targets {
			ms = append(ms, mutation(contract.ClassManagement, contract.ActionApply, "/v1/configmaps", tg[0], tg[1],
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+tg[1]+", namespace: "+tg[0]+"}\ndata: {value: "+name+"}\n"))
		}
		return contract.WriteOutputDir(req.OutputDir, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{})
	}
	op := manager.Operator{Name: tn.operator, ServiceAccount: tn.sa, Runner: &runner.InProcess{Name: tn.operator, Func: fn,
		Outputs: &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: ids}}}}
	startFaultManager(t, cfg, []manager.Operator{op}, faultManagerOptions{management: tn.requests.wrap(hosted.Config(cluster.Management))})
	return tn
}

// TestTenantIsolation runs two hosted control planes on the one management server, each
// with its own topolayer whose operator writes as a service account allowed ConfigMaps in
// its own namespace only. Each operator's outputs land in its own namespace, whatever
// standalone namespace they name (even the other tenant's namespace: a forged alias); the
// impersonated identity can neither read nor write the other namespace; and every request a
// manager makes on the management cluster is discovery or within its own namespace: nothing
// cluster-scoped, nothing of the other tenant.
func TestTenantIsolation(t *testing.T) {
	ctx := t.Context()
	cs, _ := clients(t, hosted.Config(cluster.Management))
	// b first, so that a can name b's namespace in its outputs.
	b := newTenant(t, "tenant-b", [][2]string{{"openshift-tenant", "settings"}})
	a := newTenant(t, "tenant-a", [][2]string{{"openshift-tenant", "settings"}, {b.namespace, "intrusion"}})

	for _, tn := range []*tenant{a, b} {
		waitLong(t, tn.operator+" applied", 30*time.Second, func(ctx context.Context) (bool, error) {
			st, err := cs.CoreV1().ConfigMaps(tn.namespace).Get(ctx, manager.StatusName(tn.operator), metav1.GetOptions{})
			if err == nil && st.Data["result"] != manager.ResultSucceeded {
				t.Logf("status of %s:\n%s", tn.operator, st.Data["status.yaml"])
			}
			return err == nil && st.Data["result"] == manager.ResultSucceeded, err
		})
	}
	// The same standalone name in both tenants: two objects, each in its own namespace.
	for _, tn := range []*tenant{a, b} {
		cm, err := cs.CoreV1().ConfigMaps(tn.namespace).Get(ctx, "openshift-tenant--settings", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels[namespaces.LabelOperator] != tn.operator {
			t.Errorf("%s/%s written by %q, want %s", tn.namespace, cm.Name, cm.Labels[namespaces.LabelOperator], tn.operator)
		}
	}
	// a's output naming b's namespace stays in a's.
	if _, err := cs.CoreV1().ConfigMaps(a.namespace).Get(ctx, b.namespace+"--intrusion", metav1.GetOptions{}); err != nil {
		t.Errorf("a's output naming b's namespace: %v", err)
	}
	list, err := cs.CoreV1().ConfigMaps(b.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Labels[namespaces.LabelOperator] == a.operator || strings.Contains(cm.Name, "intrusion") {
			t.Errorf("tenant a wrote %s/%s in tenant b's namespace", b.namespace, cm.Name)
		}
	}

	// The identity a's writes impersonate can neither read nor write b's namespace, not even
	// with a name that b's own operator uses.
	cfg := rest.CopyConfig(hosted.Config(cluster.Management))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: a.user}
	asA, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asA.CoreV1().ConfigMaps(a.namespace).Get(ctx, "openshift-tenant--settings", metav1.GetOptions{}); err != nil {
		t.Errorf("as %s in its own namespace: %v", a.user, err)
	}
	forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "openshift-tenant--settings", Namespace: b.namespace,
		Labels: map[string]string{namespaces.LabelOperator: b.operator}}, Data: map[string]string{"value": "forged"}}
	for what, err := range map[string]error{
		"get": func() error {
			_, err := asA.CoreV1().ConfigMaps(b.namespace).Get(ctx, "openshift-tenant--settings", metav1.GetOptions{})
			return err
		}(),
		"list": func() error {
			_, err := asA.CoreV1().ConfigMaps(b.namespace).List(ctx, metav1.ListOptions{})
			return err
		}(),
		"create": func() error {
			_, err := asA.CoreV1().ConfigMaps(b.namespace).Create(ctx, forged, metav1.CreateOptions{})
			return err
		}(),
		"update": func() error {
			_, err := asA.CoreV1().ConfigMaps(b.namespace).Update(ctx, forged, metav1.UpdateOptions{})
			return err
		}(),
		"list cluster-wide": func() error {
			_, err := asA.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			return err
		}(),
	} {
		if !apierrors.IsForbidden(err) {
			t.Errorf("as %s, %s of ConfigMaps in %s: %v, want forbidden", a.user, what, b.namespace, err)
		}
	}
	if got, err := cs.CoreV1().ConfigMaps(b.namespace).Get(ctx, "openshift-tenant--settings", metav1.GetOptions{}); err != nil || got.Data["value"] != "tenant-b" {
		t.Errorf("b's ConfigMap after a's attempts: %v %v", got.Data, err)
	}

	// What each manager asked of the management server.
	for _, tn := range []*tenant{a, b} {
		scopes := map[string]int{}
		var writesAs []string
		for _, r := range tn.requests.all() {
			s := scopeOf(r.path)
			scopes[s]++
			if s == "cluster" {
				t.Errorf("%s: cluster-scoped request %s %s", tn.operator, r.method, r.path)
			}
			if strings.HasPrefix(s, "namespace ") && s != "namespace "+tn.namespace {
				t.Errorf("%s: request outside its namespace: %s %s", tn.operator, r.method, r.path)
			}
			if r.method != http.MethodGet && strings.Contains(r.path, "/configmaps/openshift-") {
				writesAs = append(writesAs, r.as)
			}
		}
		t.Logf("%s: requests by scope: %v", tn.operator, scopes)
		if len(writesAs) == 0 {
			t.Errorf("%s: no write of its outputs recorded", tn.operator)
		}
		for _, as := range writesAs {
			if as != tn.user {
				t.Errorf("%s: an output written as %q, want %s", tn.operator, as, tn.user)
			}
		}
	}
}
