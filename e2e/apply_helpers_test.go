package e2e

import (
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/topology"
)

// mutatingCounter counts the mutating requests (not GET, not a dry-run) sent through the
// rest.Configs it wraps.
type mutatingCounter struct{ n atomic.Int64 }

func (c *mutatingCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead && r.URL.Query().Get("dryRun") == "" {
				c.n.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// hostedTargets builds the management and guest targets of the hosted environment for
// operator, with the HostedControlPlane owner resolved; counter, when set, counts their
// mutating requests.
func hostedTargets(t *testing.T, operator string, counter *mutatingCounter) map[string]apply.Target {
	t.Helper()
	return hostedTargetsAdopting(t, operator, counter, nil, nil)
}

// hostedTargetsAdopting is hostedTargets whose targets adopt unmarked objects (adopt not nil);
// log, when set, records their requests.
func hostedTargetsAdopting(t *testing.T, operator string, counter *mutatingCounter, log *countingLog, adopt *apply.Adoption) map[string]apply.Target {
	t.Helper()
	hcp := hosted.HostedControlPlane()
	mgmtCfg, guestCfg := hosted.Config(cluster.Management), hosted.Config(cluster.Guest)
	if counter != nil {
		mgmtCfg, guestCfg = counter.wrap(mgmtCfg), counter.wrap(guestCfg)
	}
	if log != nil {
		mgmtCfg, guestCfg = log.wrap(mgmtCfg), log.wrap(guestCfg)
	}
	owner, err := hypershift.ResolveHostedControlPlane(t.Context(), mgmtCfg, hcp.Namespace, hcp.HostedControlPlane)
	if err != nil {
		t.Fatal(err)
	}
	mgmt, err := apply.NewClusterTarget(cluster.Management, mgmtCfg, apply.Options{
		Namespace: hcp.Namespace, Operator: operator, HostedControlPlane: owner, RequireOwnership: true, Adopt: adopt,
	})
	if err != nil {
		t.Fatal(err)
	}
	guest, err := apply.NewClusterTarget(cluster.Guest, guestCfg, apply.Options{Operator: operator, RequireOwnership: true, Adopt: adopt})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]apply.Target{cluster.Management: mgmt, cluster.Guest: guest}
}

// hostedPlan translates mutations (standalone form) for the hosted environment.
func hostedPlan(t *testing.T, operator string, declared *contract.OutputResources, ms ...contract.Mutation) *plans.Plan {
	t.Helper()
	cfg, err := config.Load(filepath.Join("..", "examples", "hosted.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return mustPlan(t, cfg, operator, declared, ms...)
}

// mustPlan translates mutations (standalone form) with cfg, failing the test when the plan
// rejects an entry.
func mustPlan(t *testing.T, cfg *config.TopologyConfig, operator string, declared *contract.OutputResources, ms ...contract.Mutation) *plans.Plan {
	t.Helper()
	engine, err := topology.Engine(cfg, operator, declared)
	if err != nil {
		t.Fatal(err)
	}
	plan := engine.Plan(&contract.OutputDir{Mutations: ms})
	if rejected := plan.Rejected(); len(rejected) > 0 {
		t.Fatalf("rejected entries: %+v", rejected)
	}
	return plan
}

// mustApply applies plan and fails the test on error, logging each entry.
func mustApply(t *testing.T, plan *plans.Plan, targets map[string]apply.Target) []apply.EntryResult {
	t.Helper()
	res, err := apply.ApplyPlan(t.Context(), plan, targets)
	for _, r := range res {
		if r.Err != nil {
			t.Logf("%s %s %s: %s: %v", r.Action, r.Cluster, r.Identity, r.Status, r.Err)
		}
	}
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return res
}

// mutation builds one standalone mutation.
func mutation(class contract.Class, action contract.Action, gvr, ns, name, body string) contract.Mutation {
	parts := strings.SplitN(gvr, "/", 3) // group/version/resource
	md := contract.Metadata{
		Action: action, ControllerInstanceName: "e2e", Name: name, Namespace: ns,
		ResourceType: contract.ResourceType{Group: parts[0], Version: parts[1], Resource: parts[2]},
	}
	return contract.Mutation{Class: class, Metadata: md, Body: []byte(body)}
}

// targetOf returns the target identity of the plan's only apply entry.
func targetOf(t *testing.T, plan *plans.Plan) contract.Identity {
	t.Helper()
	for _, e := range plan.Entries {
		return e.Target.Identity
	}
	t.Fatal("empty plan")
	return contract.Identity{}
}

// checkOwned checks that obj carries the standalone identity annotations of src, the
// operator label and, when owned (an object the management target wrote whole, not an
// Event: see ownedByHCP), the HostedControlPlane ownerReference.
func checkOwned(t *testing.T, obj *unstructured.Unstructured, src contract.Identity, operator string, owned bool) {
	t.Helper()
	ann := obj.GetAnnotations()
	for k, v := range namespaces.SourceAnnotations(src) {
		if got, ok := ann[k]; !ok || got != v {
			t.Errorf("%s: annotation %s = %q, want %q", obj.GetName(), k, got, v)
		}
	}
	if _, ok := ann[namespaces.AnnotationOwnerHCP]; ok {
		t.Errorf("%s: the %s annotation reached the server", obj.GetName(), namespaces.AnnotationOwnerHCP)
	}
	if got := obj.GetLabels()[namespaces.LabelOperator]; got != operator {
		t.Errorf("%s: label %s = %q, want %q", obj.GetName(), namespaces.LabelOperator, got, operator)
	}
	if !owned {
		return
	}
	hcp := hosted.HostedControlPlane()
	_, dyn := clients(t, hosted.Config(cluster.Management))
	live, err := dyn.Resource(hypershift.HostedControlPlaneGVR()).Namespace(hcp.Namespace).Get(t.Context(), hcp.HostedControlPlane, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == live.GetUID() && r.Kind == "HostedControlPlane" && r.Name == hcp.HostedControlPlane {
			return
		}
	}
	t.Errorf("%s: ownerReferences %+v do not name the HostedControlPlane %s (uid %s)", obj.GetName(), obj.GetOwnerReferences(), hcp.HostedControlPlane, live.GetUID())
}

// ownedByHCP reports whether the management target adds the HostedControlPlane owner to the
// object of plan entry e: an object of the HCP namespace written whole, not an Event.
func ownedByHCP(e plans.Entry) bool {
	id := e.Target.Identity
	return e.Target.Cluster == cluster.Management && id.Namespace != "" && id.Resource != "events" && !e.Action.IsStatus()
}
