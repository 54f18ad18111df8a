package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/hosted/serviceca"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/mom/manager"
	"github.com/topolayer/topolayer/namespaces"
)

// caoBinary is the real, unmodified cluster-authentication-operator, from the directory
// TOPOLAYER_OPERATORS names (.ci/run unpacks ../shared/operators there); the test skips
// without it.
func caoBinary(t *testing.T) string {
	t.Helper()
	return operatorBinary(t, "cluster-authentication-operator")
}

// seed server-side-applies every object of the YAML files in dir (relative to the example)
// with fieldManager, on the status subresource when status is set. namespace, when set,
// replaces the example's HCP namespace.
func seed(t *testing.T, cfg *rest.Config, dir, fieldManager, namespace string, status bool) []*unstructured.Unstructured {
	t.Helper()
	objs := seedObjects(t, filepath.Join("..", "examples", "cluster-authentication-operator", "seed", dir))
	for _, u := range objs {
		if namespace != "" && u.GetNamespace() != "" {
			u.SetNamespace(namespace)
		}
	}
	return serverSideApply(t, cfg, objs, fieldManager, status)
}

// serverSideApply applies objs, in order, with fieldManager (forcing), on the status
// subresource when status is set, and returns what the server stored. What it creates goes
// with the test: the clusters are shared by the package's tests.
func serverSideApply(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured, fieldManager string, status bool) []*unstructured.Unstructured {
	t.Helper()
	_, dyn := clients(t, cfg)
	mapper := restMapper(t, cfg)
	var out []*unstructured.Unstructured
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("apply %s %s: %v", gvk, u.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if u.GetNamespace() != "" {
			ri = dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
		}
		data, err := u.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var subresources []string
		if status {
			subresources = []string{"status"}
		} else if _, err := ri.Get(t.Context(), u.GetName(), metav1.GetOptions{}); apierrors.IsNotFound(err) && mapping.Resource.Resource != "namespaces" {
			name := u.GetName()
			t.Cleanup(func() { _ = ri.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		}
		got, err := ri.Patch(t.Context(), u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: ptrTo(true)}, subresources...)
		if err != nil {
			t.Fatalf("apply %s %s/%s: %v", mapping.Resource.Resource, u.GetNamespace(), u.GetName(), err)
		}
		out = append(out, got)
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// caoHosted is the setting the real CAO's hosted tests share: a HostedControlPlane of the
// test's own (hcp in namespace hcpNS), the shipped hosted example's configuration running
// the real CAO there (cfgFile), and the management and guest clusters seeded as the example
// says; cr is the operator CR of the management seed.
type caoHosted struct {
	hcpNS, hcp, cfgFile string
	mgmt, guest         *rest.Config
	cr                  *unstructured.Unstructured
}

// setUpCAOHosted creates the HostedControlPlane name, writes the example's configuration for
// it, edited further by edit when not nil, and seeds both clusters. It skips without the
// real CAO.
func setUpCAOHosted(t *testing.T, name string, edit func(*config.TopologyConfig)) caoHosted {
	t.Helper()
	bin := caoBinary(t)
	own, _ := ownHostedControlPlane(t, name)
	h := caoHosted{hcpNS: own.Topology.Hosted.Namespace, hcp: own.Topology.Hosted.HostedControlPlane,
		mgmt: hosted.Config(cluster.Management), guest: hosted.Config(cluster.Guest)}
	h.cfgFile = configWith(t, filepath.Join("cluster-authentication-operator", "hosted.yaml"), func(cfg *config.TopologyConfig) {
		cfg.Topology.Hosted = withExampleHosted(own.Topology.Hosted, cfg.Topology.Hosted)
		cfg.Operators[0].Command = []string{bin}
		if edit != nil {
			edit(cfg)
		}
	})
	seed(t, h.guest, "guest", "installer", "", false)
	seed(t, h.guest, "guest-status", "installer", "", true)
	h.cr = seed(t, h.mgmt, "management", "control-plane-operator", h.hcpNS, false)[0]
	seed(t, h.mgmt, "management-status", "router", h.hcpNS, true)
	return h
}

// caoFirstRun bounds the wait for what the real CAO's first run writes: the examples draw 8
// times in a run that follows a change (operators[].draws), the first run included, each
// draw a run of CAO of a few seconds on a loaded machine.
const caoFirstRun = 3 * time.Minute

// TestRealCAOHosted runs the real cluster-authentication-operator, unmodified, through
// topolayer run in a hosted control plane seeded as examples/cluster-authentication-operator
// says (the operator CR HyperShift creates, the guest's configuration): its partly failed
// runs are applied (the oauth server's objects in the HCP namespace, its guest RBAC), the CR
// is adopted in place, the manager settles, and then, with nothing changing, it sends no
// mutating request for a quiet window (TOPOLAYER_CAO_QUIET, default 2m).
func TestRealCAOHosted(t *testing.T) {
	quiet := caoQuiet(t)
	// With the example's resync (1m): CAO's controllers run in a random order, and a run
	// that copies nothing for a new identity provider is not followed by another unless
	// something triggers it. The quiet window counts mutating requests, which resync runs
	// on unchanged inputs do not send (TestRealCAOIdle).
	h := setUpCAOHosted(t, "cao", nil)
	hcpNS, cfgFile, mgmt, guest, cr := h.hcpNS, h.cfgFile, h.mgmt, h.guest, h.cr

	// The OAuth server's serving certificate HyperShift provides (the example aliases CAO's
	// to it); CAO's service CA check reads it.
	if _, err := kubernetes.NewForConfigOrDie(mgmt).CoreV1().Secrets(hcpNS).Create(t.Context(), servingCertSecret(t, hcpNS, "oauth-server-crt", "oauth-openshift."+hcpNS+".svc"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	kubeDir := writeKubeconfigs(t, hosted)
	csrsBefore := map[string]bool{}
	if csrs, err := kubernetes.NewForConfigOrDie(guest).CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	} else {
		for _, csr := range csrs.Items {
			csrsBefore[csr.Name] = true
		}
	}
	start := time.Now()
	// No leader election: its lease renewals are the only writes of an idle manager, and
	// would hide the operator's in the count below.
	p := startRun(t, append([]string{"--config", cfgFile, "--leader-elect=false", "-v", "1"}, hostedKubeconfigFlags(kubeDir)...)...)

	mgmtCS, mgmtDyn := clients(t, mgmt)
	guestCS, _ := clients(t, guest)
	const op = "cluster-authentication-operator"
	// What CAO's controllers that can work offline write, translated into the HCP namespace.
	// Its Service is HyperShift's oauth-openshift (the alias), which its writes leave alone.
	eventuallyWithin(t, "the oauth server's service account, session secret and CA bundle in "+hcpNS, caoFirstRun, func(ctx context.Context) (bool, error) {
		if _, err := mgmtCS.CoreV1().ServiceAccounts(hcpNS).Get(ctx, "openshift-authentication--oauth-openshift", metav1.GetOptions{}); err != nil {
			return false, err
		}
		if _, err := mgmtCS.CoreV1().Secrets(hcpNS).Get(ctx, "openshift-authentication--v4-0-config-system-session", metav1.GetOptions{}); err != nil {
			return false, err
		}
		_, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(ctx, "openshift-authentication--v4-0-config-system-trusted-ca-bundle", metav1.GetOptions{})
		return err == nil, err
	})
	settled := settle(t, p, op)
	converged := time.Since(start)
	if _, err := mgmtCS.CoreV1().Services(hcpNS).Get(t.Context(), "openshift-authentication--oauth-openshift", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Service of CAO's own beside HyperShift's: %v; want none (its writes of the aliased Service are dropped)", err)
	}
	if svc, err := mgmtCS.CoreV1().Services(hcpNS).Get(t.Context(), "oauth-openshift", metav1.GetOptions{}); err != nil {
		t.Errorf("HyperShift's Service: %v", err)
	} else if len(svc.ManagedFields) != 1 || svc.ManagedFields[0].Manager != "control-plane-operator" {
		t.Errorf("HyperShift's Service written by others: %v", svc.ManagedFields)
	}
	// The OAuth server's guest RBAC (its service account's binding). The OAuth API server's
	// (system:openshift:useroauthaccesstoken-manager) is HyperShift's: the example leaves
	// CAO's controllers for it out.
	if _, err := guestCS.RbacV1().ClusterRoleBindings().Get(t.Context(), "system:openshift:openshift-authentication", metav1.GetOptions{}); err != nil {
		t.Errorf("guest RBAC: %v", err)
	}
	status, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(t.Context(), manager.StatusName(op), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The OAuth server itself: CAO's deployment controller waited for an admitted
	// oauth-openshift Route; it read HyperShift's `oauth` Route (the alias) as that.
	if _, err := mgmtCS.AppsV1().Deployments(hcpNS).Get(t.Context(), "openshift-authentication--oauth-openshift", metav1.GetOptions{}); err != nil {
		t.Errorf("the oauth-openshift Deployment: %v", err)
	}
	// Offline, the controllers that need a live cluster or the network fail: the run is
	// Degraded and names them; what the others wrote is applied.
	if r := status.Data["result"]; r != manager.ResultDegraded && r != manager.ResultSucceeded {
		t.Fatalf("last run %s:\n%s", r, status.Data["status.yaml"])
	}
	if !strings.Contains(status.Data["status.yaml"], "failedControllers") {
		t.Errorf("a Degraded run that names no failed controller:\n%s", status.Data["status.yaml"])
	}
	// The service CA bundle CAO asked the service-ca operator for, which no such operator
	// fills on the management cluster: topolayer filled it from HyperShift's
	// oauth-master-ca-bundle (topology.hosted.serviceCA), so the OAuth server's master CA is
	// HyperShift's, and CAO, reading it back, no longer reports it missing.
	serviceCAFilled(t, mgmtCS, mgmtDyn, hcpNS)
	// The OAuth server reads the kubeconfig its config file names: the guest kubeconfig its
	// pods mount (topology.hosted.guestIdentity.kubeconfigFields).
	if cli, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(t.Context(), "openshift-authentication--v4-0-config-system-cliconfig", metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if want := `"kubeConfig":"` + guestidentity.KubeconfigMountPath + "/" + guestidentity.KubeconfigKey + `"`; !strings.Contains(cli.Data["v4-0-config-system-cliconfig"], want) {
		t.Errorf("the OAuth server's config does not name the guest kubeconfig (%s):\n%s", want, cli.Data["v4-0-config-system-cliconfig"])
	}
	// HyperShift gives the authenticator its certificate: the configuration leaves CAO's
	// requester out, and the guest has no CertificateSigningRequest of it.
	if !strings.Contains(status.Data["status.yaml"], "- TODO-authenticatorCertRequester") {
		t.Errorf("the status does not name the skipped certificate requester:\n%s", status.Data["status.yaml"])
	}
	if csrs, err := guestCS.CertificatesV1().CertificateSigningRequests().List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	} else {
		// The guest is the package's: other tests apply corpus outputs that hold one.
		for _, csr := range csrs.Items {
			if !csrsBefore[csr.Name] {
				t.Errorf("a CertificateSigningRequest on the guest since the run started, want none: %s", csr.Name)
			}
		}
	}
	// The CR HyperShift created was adopted: the same object, now topolayer's.
	got, err := mgmtDyn.Resource(schema.GroupVersionResource{Group: namespaces.ShadowGroup("operator.openshift.io"), Version: "v1", Resource: "authentications"}).
		Namespace(hcpNS).Get(t.Context(), "cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetUID() != cr.GetUID() {
		t.Errorf("the operator CR was recreated: uid %s, was %s", got.GetUID(), cr.GetUID())
	}
	total := func() float64 {
		return settled[op][manager.TriggerStart] + settled[op][manager.TriggerChange] + settled[op][manager.TriggerOwnWrites]
	}
	t.Logf("settled in %s: %v runs (%v), last result %s", converged.Round(time.Second), total(), settled[op], status.Data["result"])

	// CAO's degraded conditions reach its ClusterOperator only after library-go's inertia
	// (about two minutes), in the first run after it: a resync run writes that once. The
	// quiet window starts after it.
	quietResyncs(t, p, op, 1, start.Add(caoDegradedInertia+30*time.Second))
	before := p.mutatingRequests(t)
	t.Logf("%v mutating requests to converge and pass CAO's degraded inertia; now %s without any input change", before, quiet)
	time.Sleep(quiet)
	if d := p.mutatingRequests(t) - before; d != 0 {
		t.Errorf("%v mutating requests in %s without any input change, want 0; runs now %v", d, quiet, p.runs(t, op))
	}

	// A user of the guest adds an htpasswd identity provider: its secret in openshift-config,
	// and the provider in the OAuth configuration. CAO reads both (the secret through the
	// configured resource reference) and the OAuth server's configuration follows, in the
	// HCP namespace: the provider's secret copied, mounted, and named in the cliconfig.
	idpStart, idpBefore := time.Now(), p.runs(t, op)
	htpasswd := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "htpass-secret", Namespace: "openshift-config"},
		Data:       map[string][]byte{"htpasswd": []byte("developer:$2y$05$jh9ubmN/hnZuMOd2PIeSa.yRgwA6f4zLPqXVRv1.t6fRTjnPxzoH2\n")},
	}
	if _, err := guestCS.CoreV1().Secrets("openshift-config").Create(t.Context(), htpasswd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, guestDyn := clients(t, guest)
	t.Cleanup(func() {
		// The guest is shared: later tests (and this one again, with -count) see the OAuth
		// configuration without these providers.
		ctx := context.Background()
		_, _ = guestDyn.Resource(schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "oauths"}).
			Patch(ctx, "cluster", types.MergePatchType, []byte(`{"spec":{"identityProviders":null}}`), metav1.PatchOptions{FieldManager: "cluster-admin"})
		for _, name := range []string{"htpass-secret", "htpass-second"} {
			_ = guestCS.CoreV1().Secrets("openshift-config").Delete(ctx, name, metav1.DeleteOptions{})
		}
	})
	idp := []byte(`{"spec":{"identityProviders":[{"name":"developers","mappingMethod":"claim","type":"HTPasswd","htpasswd":{"fileData":{"name":"htpass-secret"}}}]}}`)
	if _, err := guestDyn.Resource(schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "oauths"}).
		Patch(t.Context(), "cluster", types.MergePatchType, idp, metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
		t.Fatal(err)
	}
	const idpCopy = "openshift-authentication--v4-0-config-user-idp-0-file-data"
	// Upstream's apply-configuration runs an operator's controllers in a random order
	// (libraryapplyconfiguration shuffles them on purpose): CAO copies the provider's secret
	// in a run whose resource syncer comes after the config observer that registers the
	// copy, one run in two. Typically 1-2 runs and under 30 s; when every run after the
	// change draws the bad order, the example's resync (1m) runs it again, each run another
	// draw. The limits below leave room for a few bad draws and a loaded machine.
	eventuallyWithin(t, "the identity provider in the OAuth server's configuration in "+hcpNS, 5*time.Minute, func(ctx context.Context) (bool, error) {
		sec, err := mgmtCS.CoreV1().Secrets(hcpNS).Get(ctx, idpCopy, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !bytes.Equal(sec.Data["htpasswd"], htpasswd.Data["htpasswd"]) {
			return false, nil
		}
		cli, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(ctx, "openshift-authentication--v4-0-config-system-cliconfig", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !strings.Contains(cli.Data["v4-0-config-system-cliconfig"], `"name":"developers"`) {
			return false, nil
		}
		d, err := mgmtCS.AppsV1().Deployments(hcpNS).Get(ctx, "openshift-authentication--oauth-openshift", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Secret != nil && v.Secret.SecretName == idpCopy {
				return true, nil
			}
		}
		return false, nil
	})
	took := time.Since(idpStart)
	runsSince := func(now runCounts) float64 {
		return now[manager.TriggerChange] - idpBefore[manager.TriggerChange] + now[manager.TriggerOwnWrites] - idpBefore[manager.TriggerOwnWrites]
	}
	// The runs finished, and the one that may be applying what was seen (counted when it ends).
	reached := runsSince(p.runs(t, op)) + sum(p.metrics(t), "topolayer_scheduler_running", nil)
	idpSettled := settle(t, p, op)
	t.Logf("the identity provider reached %s in %s, in %v operator runs; %v runs until settled (%v)",
		hcpNS, took.Round(100*time.Millisecond), reached, runsSince(idpSettled[op]), idpSettled[op])
	if reached > 6 {
		t.Errorf("%v operator runs for one identity provider to reach the management side, want a few (at most 6)", reached)
	}

	// A second htpasswd provider, then removed: CAO copies it as idp-1 (its family declared by
	// name pattern in the example, as an output and as an input). Removed, CAO sees its copy
	// (the input pattern) and deletes it; the contract's manifest client refuses the Delete
	// of a namespaced object, and topolayer recovers it from that refusal. The copy holds the
	// users' password hashes: it must not stay.
	second := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "htpass-second", Namespace: "openshift-config"}, Data: htpasswd.Data}
	if _, err := guestCS.CoreV1().Secrets("openshift-config").Create(t.Context(), second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	oauths := guestDyn.Resource(schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "oauths"})
	two := []byte(`{"spec":{"identityProviders":[{"name":"developers","mappingMethod":"claim","type":"HTPasswd","htpasswd":{"fileData":{"name":"htpass-secret"}}},` +
		`{"name":"testers","mappingMethod":"claim","type":"HTPasswd","htpasswd":{"fileData":{"name":"htpass-second"}}}]}}`)
	if _, err := oauths.Patch(t.Context(), "cluster", types.MergePatchType, two, metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
		t.Fatal(err)
	}
	const secondCopy = "openshift-authentication--v4-0-config-user-idp-1-file-data"
	eventuallyWithin(t, "the second identity provider's copy in "+hcpNS, 5*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := mgmtCS.CoreV1().Secrets(hcpNS).Get(ctx, secondCopy, metav1.GetOptions{})
		return err == nil, nil
	})
	if _, err := oauths.Patch(t.Context(), "cluster", types.MergePatchType, idp, metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
		t.Fatal(err)
	}
	removed, removedRuns := time.Now(), p.runs(t, op)
	// The resource syncer learns that the provider went from the config observer of the
	// same run, in runs whose shuffled order puts it second (the resync runs bound the wait,
	// as for a new provider above).
	eventuallyWithin(t, "the removed provider's copy deleted from "+hcpNS, 5*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := mgmtCS.CoreV1().Secrets(hcpNS).Get(ctx, secondCopy, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	after := p.runs(t, op)
	t.Logf("the removed provider's copy was deleted in %s; runs before %v, after %v", time.Since(removed).Round(100*time.Millisecond), removedRuns, after)
	if _, err := mgmtCS.CoreV1().Secrets(hcpNS).Get(t.Context(), "openshift-authentication--v4-0-config-user-idp-0-file-data", metav1.GetOptions{}); err != nil {
		t.Errorf("the remaining provider's copy: %v; want it kept", err)
	}
	if note := eventReasons(t, hcpNS, op)["LeftBehind"]; strings.Contains(note, "v4-0-config-user-idp-1-file-data") {
		t.Errorf("the deleted copy reported left behind: %s", note)
	}
}

// rvsHashAnnotation is CAO's hash of the resourceVersions of what its OAuth server's pods
// mount: a new value rolls them.
const rvsHashAnnotation = "operator.openshift.io/rvs-hash"

// templateChangeRolls changes the content of a custom login template on the cluster users
// configure (userCfg), as a user would, and checks that the OAuth server's Deployment (on
// placedCfg, in namespace) rolls within 3 operator runs: CAO copies the template, and the
// copy's new resourceVersion, which the inputs topolayer gathers keep, changes the pods'
// rvs-hash. A first template is set up and settled before. The runs the change caused
// count (on changed inputs and on the operator's own writes); the operator runs under a
// resync period too, so that its order of controllers (upstream's apply-configuration
// shuffles them) cannot leave the copy stale, and those runs are logged.
func templateChangeRolls(t *testing.T, p *runProcess, op string, userCfg, placedCfg *rest.Config, namespace, deployment string) {
	t.Helper()
	userCS, userDyn := clients(t, userCfg)
	placedCS, _ := clients(t, placedCfg)
	template := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "login-template", Namespace: "openshift-config"},
		Data:       map[string][]byte{"login.html": []byte("<html>v1</html>")},
	}
	if _, err := userCS.CoreV1().Secrets("openshift-config").Create(t.Context(), template, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	oauths := userDyn.Resource(schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "oauths"})
	copyName := "v4-0-config-user-template-login"
	if namespace != "openshift-authentication" {
		copyName = "openshift-authentication--" + copyName
	}
	t.Cleanup(func() {
		// The cluster is shared: later tests see the OAuth configuration as it was, and
		// not the copy placed from the template, even when this test stopped before
		// templateRemovalDeletesCopy. A copy left without its template makes CAO's status
		// flip with each run's controller order (its resource syncer's Delete of it is
		// refused by the contract in the runs that know the template went), which a later
		// test on this cluster would see as an operator that never settles. The copy is
		// deleted here once a run has seen the template gone, so that no later run writes
		// it back.
		ctx := context.Background()
		_, _ = oauths.Patch(ctx, "cluster", types.MergePatchType, []byte(`{"spec":{"templates":null}}`), metav1.PatchOptions{FieldManager: "cluster-admin"})
		_ = userCS.CoreV1().Secrets("openshift-config").Delete(ctx, template.Name, metav1.DeleteOptions{})
		total := func() (n float64) {
			for _, v := range p.runs(t, op) {
				n += v
			}
			return n
		}
		seen := total()
		deadline := time.Now().Add(time.Minute)
		for total() < seen+2 && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		_ = placedCS.CoreV1().Secrets(namespace).Delete(ctx, copyName, metav1.DeleteOptions{})
	})
	if _, err := oauths.Patch(t.Context(), "cluster", types.MergePatchType, []byte(`{"spec":{"templates":{"login":{"name":"login-template"}}}}`), metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
		t.Fatal(err)
	}
	hash := func(ctx context.Context) (string, error) {
		d, err := placedCS.AppsV1().Deployments(namespace).Get(ctx, deployment, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return d.Spec.Template.Annotations[rvsHashAnnotation], nil
	}
	eventuallyWithin(t, "the login template copied", 2*time.Minute, func(ctx context.Context) (bool, error) {
		s, err := placedCS.CoreV1().Secrets(namespace).Get(ctx, copyName, metav1.GetOptions{})
		return err == nil && string(s.Data["login.html"]) == "<html>v1</html>", err
	})
	quietResyncs(t, p, op, 2, time.Time{})
	before, err := hash(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	runsBefore := p.runs(t, op)

	// The user edits the template: only the copy's content changes, not the Deployment's
	// volumes or the server's configuration.
	template.Data["login.html"] = []byte("<html>v2</html>")
	if _, err := userCS.CoreV1().Secrets("openshift-config").Update(t.Context(), template, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var after string
	eventuallyWithin(t, "the OAuth server's pods rolled ("+rvsHashAnnotation+" changed) after the template change", 2*time.Minute, func(ctx context.Context) (bool, error) {
		h, err := hash(ctx)
		after = h
		return err == nil && h != "" && h != before, err
	})
	now := p.runs(t, op)
	// The runs the change caused: those triggered by a changed input or by the operator's own
	// writes. A resync run comes every few seconds whatever changes (the idle tests' period
	// is 2s), so how many end while the change travels depends on the machine's load, not on
	// topolayer; they are logged, not counted.
	var runs, resyncs float64
	for trigger, n := range now {
		switch trigger {
		case manager.TriggerChange, manager.TriggerOwnWrites:
			runs += n - runsBefore[trigger]
		case manager.TriggerResync:
			resyncs += n - runsBefore[trigger]
		}
	}
	t.Logf("login template changed → pods rolled (%s %s → %s) in %s: %v runs on changed inputs, %v resync runs", rvsHashAnnotation, before, after, time.Since(start).Round(100*time.Millisecond), runs, resyncs)
	if before == "" {
		t.Errorf("the Deployment had no %s before the change", rvsHashAnnotation)
	}
	if runs > 3 {
		t.Errorf("%v runs on changed inputs for a template change to roll the pods, want at most 3", runs)
	}
}

// templateRemovalDeletesCopy removes the custom login template templateChangeRolls set up, as
// a user would (the OAuth's spec.templates null, the source Secret deleted), and checks that
// its copy (on placedCfg, in namespace) is deleted and the operator settles. CAO's resource
// syncer, shown its copy (an input of the example), deletes it; the contract's manifest
// client refuses the Delete of a namespaced object (spec §2.5), and the syncer reports the
// refusal in its degraded condition: topolayer recovers the Delete from there and applies
// it. Once the copy is gone CAO no longer tries, its condition clears, and resync runs send
// no mutating request, with no run on topolayer's own writes between them.
func templateRemovalDeletesCopy(t *testing.T, p *runProcess, op string, userCfg, placedCfg *rest.Config, namespace string) {
	t.Helper()
	userCS, userDyn := clients(t, userCfg)
	placedCS, _ := clients(t, placedCfg)
	copyName := "v4-0-config-user-template-login"
	if namespace != "openshift-authentication" {
		copyName = "openshift-authentication--" + copyName
	}
	if _, err := placedCS.CoreV1().Secrets(namespace).Get(t.Context(), copyName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the login template's copy before the removal: %v", err)
	}
	runsBefore := p.runs(t, op)
	oauths := userDyn.Resource(schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "oauths"})
	if _, err := oauths.Patch(t.Context(), "cluster", types.MergePatchType, []byte(`{"spec":{"templates":null}}`), metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
		t.Fatal(err)
	}
	if err := userCS.CoreV1().Secrets("openshift-config").Delete(t.Context(), "login-template", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eventuallyWithin(t, "the login template's copy deleted", 2*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := placedCS.CoreV1().Secrets(namespace).Get(ctx, copyName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	now := p.runs(t, op)
	var runs float64
	for trigger, n := range now {
		runs += n - runsBefore[trigger]
	}
	t.Logf("login template removed → copy %s/%s deleted in %s, %v operator runs", namespace, copyName, time.Since(start).Round(100*time.Millisecond), runs)
	// Settled: CAO no longer sees the copy, so it no longer tries to delete it.
	quietResyncs(t, p, op, 5, time.Time{})
	if _, err := placedCS.CoreV1().Secrets(namespace).Get(t.Context(), copyName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the login template's copy after settling: %v, want it deleted", err)
	}
}

// residentManager is the field manager of the resident cluster-authentication-operator.
const caoResidentManager = "authentication-operator"

// TestRealCAOStandalone runs the real cluster-authentication-operator through topolayer run
// on one standalone cluster where the resident operator ran before: every object of the CAO
// corpus was created by server-side apply with its field manager. topolayer adopts what the
// operator writes again (same uid, the resident manager's field ownership moved to
// topolayer's, no conflict), the manager settles, and with nothing changing it sends no
// mutating request.
func TestRealCAOStandalone(t *testing.T) {
	bin := caoBinary(t)
	if os.Getenv(corpus.EnvVar) == "" {
		t.Skipf("%s is not set: no CAO corpus for the resident operator's objects", corpus.EnvVar)
	}
	quiet := caoQuiet(t)
	cfgFile := configWith(t, filepath.Join("cluster-authentication-operator", "standalone.yaml"), func(cfg *config.TopologyConfig) {
		cfg.Operators[0].Command = []string{bin}
		// Without the example's resync: its quiet window then sees no run at all, and CAO's
		// degraded inertia (a resync run's one status write, see TestRealCAOHosted) does not
		// have to be waited out.
		cfg.Operators[0].Resync = nil
		cfg.Manager.Namespace = newNamespace(t, standalone.Config(cluster.Single))
	})

	rc := standalone.Config(cluster.Single)
	resident := seedStandaloneCAO(t, rc)

	kubeDir := writeKubeconfigs(t, standalone)
	start := time.Now()
	p := startRun(t, "--config", cfgFile, "--leader-elect=false", "-v", "1",
		"--kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Single))
	const op = "cluster-authentication-operator"
	cs, dyn := clients(t, rc)
	eventuallyWithin(t, "a first run", caoFirstRun, func(context.Context) (bool, error) {
		n := p.runs(t, op)
		return n[manager.TriggerStart] > 0, nil
	})
	settled := settle(t, p, op)
	t.Logf("settled in %s: %v", time.Since(start).Round(time.Second), settled[op])
	if _, err := cs.AppsV1().Deployments("openshift-authentication").Get(t.Context(), "oauth-openshift", metav1.GetOptions{}); err != nil {
		t.Errorf("the oauth-openshift Deployment: %v", err)
	}

	// Adopted: the same objects, and for each one topolayer wrote, no field still owned by
	// the resident operator that topolayer now applies.
	mapper := restMapper(t, rc)
	var adopted int
	for _, before := range resident {
		gvk := before.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		now, err := dyn.Resource(mapping.Resource).Namespace(before.GetNamespace()).Get(t.Context(), before.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s %s/%s: %v", mapping.Resource.Resource, before.GetNamespace(), before.GetName(), err)
			continue
		}
		if now.GetUID() != before.GetUID() {
			t.Errorf("%s %s/%s: uid %s -> %s, want the resident operator's object adopted in place", mapping.Resource.Resource, before.GetNamespace(), before.GetName(), before.GetUID(), now.GetUID())
		}
		if overlap, ours := fieldsStillResident(t, now, start); ours {
			adopted++
			if !overlap.Empty() {
				t.Errorf("%s %s/%s: fields both %s and topolayer own: %s", mapping.Resource.Resource, before.GetNamespace(), before.GetName(), caoResidentManager, overlap)
			}
		}
	}
	t.Logf("%d of the resident operator's %d objects written again by topolayer, adopted in place", adopted, len(resident))
	if adopted == 0 {
		t.Error("topolayer wrote none of the resident operator's objects")
	}

	before := p.mutatingRequests(t)
	time.Sleep(quiet)
	if d := p.mutatingRequests(t) - before; d != 0 {
		t.Errorf("%v mutating requests in %s without any input change, want 0; runs now %v", d, quiet, p.runs(t, op))
	}
}

// seedStandaloneCAO seeds the standalone cluster rc as a cluster where the resident
// cluster-authentication-operator ran: the installer's configuration, and every object of
// the CAO corpus created by server-side apply with the resident operator's field manager,
// its Route admitted. It returns the resident operator's objects.
func seedStandaloneCAO(t *testing.T, rc *rest.Config) []*unstructured.Unstructured {
	t.Helper()
	seed(t, rc, "cluster", "installer", "", false)
	seed(t, rc, "guest-status", "installer", "", true)
	// What the resident operator created: the last body of every object of the corpus.
	// (the corpus has no Route: the resident operator's is added).
	route := object(t, `
apiVersion: route.openshift.io/v1
kind: Route
metadata: {name: oauth-openshift, namespace: openshift-authentication, labels: {app: oauth-openshift}}
spec:
  host: oauth-openshift.apps.example.devcluster.openshift.com
  port: {targetPort: 6443}
  to: {kind: Service, name: oauth-openshift, weight: 100}
  tls: {termination: passthrough, insecureEdgeTerminationPolicy: Redirect}
  wildcardPolicy: None
`)
	// The resident operator created them: what another test's run left on this shared
	// cluster marked with topolayer's operator label is removed first, or it would be taken
	// for topolayer's own and not adopted.
	residents := append(residentObjects(t), route)
	deleteExisting(t, rc, residents)
	resident := serverSideApply(t, rc, residents, caoResidentManager, false)
	// The cluster's router admitted the operator's Route.
	admitOAuthRoute(t, rc, "oauth-openshift.apps.example.devcluster.openshift.com")
	return resident
}

// admitOAuthRoute writes, as the cluster's router, the status of an admitted Route
// openshift-authentication/oauth-openshift (the OAuth server's) served at host.
func admitOAuthRoute(t *testing.T, rc *rest.Config, host string) {
	t.Helper()
	serverSideApply(t, rc, []*unstructured.Unstructured{object(t, `
apiVersion: route.openshift.io/v1
kind: Route
metadata: {name: oauth-openshift, namespace: openshift-authentication}
status:
  ingress:
  - host: `+host+`
    routerName: default
    conditions: [{type: Admitted, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z"}]
`)}, "router", true)
}

// deleteExisting deletes each of objs that exists on the cluster marked with topolayer's
// operator label, and waits until it is gone. Namespaces and CustomResourceDefinitions are
// the environment's (the harness installs the payload's CRDs once for every test of the
// package): they are left as they are, or serverSideApply, finding them absent, would
// delete them when the test ends.
func deleteExisting(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured) {
	t.Helper()
	_, dyn := clients(t, cfg)
	mapper := restMapper(t, cfg)
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("delete %s %s: %v", gvk, u.GetName(), err)
		}
		if r := mapping.Resource.Resource; r == "namespaces" || r == "customresourcedefinitions" {
			continue
		}
		ri := dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
		live, err := ri.Get(t.Context(), u.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && live.GetLabels()[namespaces.LabelOperator] == "") {
			continue
		}
		if err != nil {
			t.Fatalf("get %s %s/%s: %v", mapping.Resource.Resource, u.GetNamespace(), u.GetName(), err)
		}
		if err := ri.Delete(t.Context(), u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete %s %s/%s: %v", mapping.Resource.Resource, u.GetNamespace(), u.GetName(), err)
		}
		eventually(t, "deleted: "+mapping.Resource.Resource+" "+u.GetNamespace()+"/"+u.GetName(), func(ctx context.Context) (bool, error) {
			_, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	}
}

// caoQuiet is how long the CAO tests watch an idle manager for writes: 2 minutes, or
// TOPOLAYER_CAO_QUIET.
func caoQuiet(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("TOPOLAYER_CAO_QUIET")
	if v == "" {
		return 2 * time.Minute
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("TOPOLAYER_CAO_QUIET=%q: %v", v, err)
	}
	return d
}

// residentObjects are the objects a resident cluster-authentication-operator created: the
// last body of every object the CAO corpus cases create, update or apply (not their status,
// not events), Namespaces first, with an image in every container (its environment's).
// The operator CR and the cluster configuration are the installer's (seed/cluster).
func residentObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	last := map[contract.Key]*unstructured.Unstructured{}
	var order []contract.Key
	for _, c := range corpus.CAOCases(t) {
		out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range withImages(t, out.Mutations) {
			a := m.Metadata.Action
			id := m.Identity()
			if len(m.Body) == 0 || a.IsStatus() || id.IsEvent() || id.Name == "" ||
				(a != contract.ActionCreate && a != contract.ActionUpdate && a != contract.ActionApply) ||
				id.Group == "config.openshift.io" || id.Group == "operator.openshift.io" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(m.Body, &u.Object); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			contract.StripServerFields(u.Object)
			unstructured.RemoveNestedField(u.Object, "status")
			k := id.Key()
			if _, ok := last[k]; !ok {
				order = append(order, k)
			}
			last[k] = u
		}
	}
	var nss, others []*unstructured.Unstructured
	for _, k := range order {
		if k.Resource == "namespaces" {
			nss = append(nss, last[k])
		} else {
			others = append(others, last[k])
		}
	}
	return append(nss, others...)
}

// fieldsStillResident returns the fields of obj that the resident operator's field manager
// owns and that topolayer's writes (the managedFields entries of other managers written
// since topolayer started) own too, and whether topolayer wrote obj at all.
func fieldsStillResident(t *testing.T, obj *unstructured.Unstructured, since time.Time) (*fieldpath.Set, bool) {
	t.Helper()
	theirs, ours := &fieldpath.Set{}, &fieldpath.Set{}
	wrote := false
	for _, mf := range obj.GetManagedFields() {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			t.Fatal(err)
		}
		switch {
		case mf.Manager == caoResidentManager:
			theirs = theirs.Union(set)
		case mf.Time != nil && !mf.Time.Time.Before(since.Truncate(time.Second)):
			wrote = true
			ours = ours.Union(set)
		}
	}
	return theirs.Intersection(ours).Leaves(), wrote
}

// mutatingRequests is the number of mutating requests (POST, PUT, PATCH, DELETE) the process
// has sent to the API servers, from its client metrics.
func (p *runProcess) mutatingRequests(t *testing.T) float64 {
	t.Helper()
	f := p.metrics(t)
	var n float64
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		n += sum(f, "rest_client_requests_total", map[string]string{"method": m})
	}
	return n
}

// serviceCAFilled checks that CAO's service CA ConfigMap in hcpNS holds HyperShift's master
// CA bundle, written by topolayer's service CA filler alone, and that CAO's
// SystemServiceCAConfigDegraded condition is False.
func serviceCAFilled(t *testing.T, mgmtCS kubernetes.Interface, mgmtDyn dynamic.Interface, hcpNS string) {
	t.Helper()
	master, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(t.Context(), cluster.OAuthMasterCABundle, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const placed = "openshift-authentication--v4-0-config-system-service-ca"
	authGVR := schema.GroupVersionResource{Group: namespaces.ShadowGroup("operator.openshift.io"), Version: "v1", Resource: "authentications"}
	last := "nothing read"
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the service CA bundle, last seen: %s", last)
		}
	})
	eventuallyWithin(t, "the service CA bundle filled and CAO's SystemServiceCAConfigDegraded False", 2*time.Minute, func(ctx context.Context) (bool, error) {
		cm, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(ctx, placed, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if last = fmt.Sprintf("%s holds %d bytes under %s", placed, len(cm.Data[serviceca.KeyServiceCA]), serviceca.KeyServiceCA); cm.Data[serviceca.KeyServiceCA] != master.Data["ca.crt"] {
			return false, nil
		}
		auth, err := mgmtDyn.Resource(authGVR).Namespace(hcpNS).Get(ctx, "cluster", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(auth.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "SystemServiceCAConfigDegraded" {
				last += fmt.Sprintf("; CAO's SystemServiceCAConfigDegraded %v %v: %v", m["status"], m["reason"], m["message"])
				return m["status"] == "False", nil
			}
		}
		return false, nil
	})
	cm, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(t.Context(), placed, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cm.ManagedFields {
		if f.Manager != serviceca.DefaultFieldManager && f.FieldsV1 != nil && strings.Contains(string(f.FieldsV1.Raw), `"f:`+serviceca.KeyServiceCA+`"`) {
			t.Errorf("%s's %s written by %s, want only %s", placed, serviceca.KeyServiceCA, f.Manager, serviceca.DefaultFieldManager)
		}
	}
}
