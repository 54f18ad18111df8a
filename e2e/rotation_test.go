package e2e

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/mom/manager"
)

// operandOperator is an in-process contract operator that reads nothing and writes, in the
// Management class, the namespace ns, the service account name in it and a Deployment name
// running as that account. runs counts its runs.
func operandOperator(opName, ns, name string, runs *atomic.Int64) manager.Operator {
	id := func(group, resource, namespace, n string) contract.ExactResourceID {
		return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: group, Version: "v1", Resource: resource}, Namespace: namespace, Name: n}
	}
	outputs := &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
		id("", "namespaces", "", ns), id("", "serviceaccounts", ns, name), id("apps", "deployments", ns, name),
	}}}
	fn := func(ctx context.Context, req runner.Request) error {
		runs.Add(1)
		ms := []contract.Mutation{
			mutation(contract.ClassManagement, contract.ActionCreate, "/v1/namespaces", "", ns, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n"),
			mutation(contract.ClassManagement, contract.ActionApply, "/v1/serviceaccounts", ns, name, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: "+name+", namespace: "+ns+"}\n"),
			mutation(contract.ClassManagement, contract.ActionApply, "apps/v1/deployments", ns, name, `apiVersion: apps/v1
kind: Deployment
metadata: {name: `+name+`, namespace: `+ns+`}
spec:
  selector: {matchLabels: {app: `+name+`}}
  template:
    metadata: {labels: {app: `+name+`}}
    spec:
      serviceAccountName: `+name+`
      containers: [{name: operand, image: registry.example/operand:e2e}]
`),
		}
		return contract.WriteOutputDir(req.OutputDir, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{})
	}
	return manager.Operator{Name: opName, Runner: &runner.InProcess{Name: opName, Func: fn, Inputs: &contract.InputResources{}, Outputs: outputs}}
}

// whoami returns the user a kubeconfig authenticates as, from a SelfSubjectReview.
func whoami(ctx context.Context, kubeconfig []byte) (string, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

// TestRunRefreshesGuestKubeconfig: the manager writes the kubeconfig Secret of an operand's
// guest identity after the operator's first run, with a token of the shortest lifetime the
// TokenRequest API grants (10m: its validation refuses less, and
// --service-account-max-token-expiration cannot go below 1h), due for refresh at 80% of the
// lifetime the guest returned; while nothing changes it rewrites the Secret with a new token
// before the old one expires, and the operator does not run again. The refresher's clock is
// a fake one stepped past the due time: the tokens and their expiry are the real guest's.
func TestRunRefreshesGuestKubeconfig(t *testing.T) {
	cfg, _ := ownHostedControlPlane(t, "rotation")
	cfg.Scheduler.Debounce.Duration = 200 * time.Millisecond
	cfg.Scheduler.Cooldown.Duration = 0
	guestCfg := hosted.Config(cluster.Guest)
	cfg.Topology.Hosted.GuestIdentity.Server = guestCfg.Host
	cfg.Topology.Hosted.GuestIdentity.TokenExpiration = &metav1.Duration{Duration: 10 * time.Minute}
	hcpNS := cfg.Topology.Hosted.Namespace
	sfx := uniqueSuffix(t)
	opName, ns, name := "rotate-"+sfx, "openshift-rotate-"+sfx, "operand"
	var runs atomic.Int64
	fake := clocktesting.NewFakeClock(time.Now())

	ctx := t.Context()
	mgr := newManager(t, hosted.Config(cluster.Management), hcpNS)
	if _, err := manager.AddToManager(ctx, mgr, manager.EmbedOptions{Topology: mustTopology(t, cfg), Clusters: map[string]*rest.Config{cluster.Guest: guestCfg},
		Operators: []manager.Operator{operandOperator(opName, ns, name, &runs)}, WorkDir: t.TempDir(), RefreshClock: fake, Registerer: prometheus.NewRegistry()}); err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, ctx, mgr)

	mgmtCS, _ := clients(t, hosted.Config(cluster.Management))
	secretName := guestidentity.SecretName(ns, name)
	secret := func(ctx context.Context) (*corev1.Secret, error) {
		return mgmtCS.CoreV1().Secrets(hcpNS).Get(ctx, secretName, metav1.GetOptions{})
	}
	var first *corev1.Secret
	eventually(t, "the guest kubeconfig secret and a successful run", func(ctx context.Context) (bool, error) {
		var err error
		if first, err = secret(ctx); err != nil {
			return false, err
		}
		st, err := mgmtCS.CoreV1().ConfigMaps(hcpNS).Get(ctx, manager.StatusName(opName), metav1.GetOptions{})
		return err == nil && st.Data["result"] == manager.ResultSucceeded, err
	})
	issued := fake.Now()
	dep, err := mgmtCS.AppsV1().Deployments(hcpNS).Get(ctx, ns+"--"+name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runsBefore := runs.Load()

	expires1 := annotationTime(t, first, guestidentity.AnnotationExpires)
	refresh1 := annotationTime(t, first, guestidentity.AnnotationRefresh)
	lifetime := expires1.Sub(issued)
	t.Logf("first token: lifetime %s as the guest returned it (asked 10m), refresh due at %s (%.0f%%)", lifetime.Round(time.Second),
		refresh1.Sub(issued).Round(time.Second), 100*float64(refresh1.Sub(issued))/float64(lifetime))
	if lifetime < 9*time.Minute || lifetime > 10*time.Minute+5*time.Second {
		t.Errorf("token lifetime %s, want the 10m asked", lifetime)
	}
	if want := guestidentity.RefreshTime(issued, expires1); refresh1.Sub(want).Abs() > 2*time.Second {
		t.Errorf("refresh due at %s, want %s: 80%% of the lifetime the guest returned", refresh1, want)
	}
	user := "system:serviceaccount:" + ns + ":" + name
	if u, err := whoami(ctx, first.Data[guestidentity.KubeconfigKey]); err != nil || u != user {
		t.Fatalf("the first kubeconfig is %q (%v), want %s", u, err, user)
	}

	// A minute before it is due, nothing is refreshed.
	fake.SetTime(refresh1.Add(-time.Minute))
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		s, err := secret(ctx)
		return err == nil && s.ResourceVersion != first.ResourceVersion, err
	}); err == nil {
		t.Fatal("the secret was rewritten before its refresh was due")
	}

	// Due: a new token, before the first expires.
	fake.SetTime(refresh1.Add(time.Second))
	refreshedAt := fake.Now()
	var second *corev1.Secret
	eventually(t, "the refreshed secret", func(ctx context.Context) (bool, error) {
		var err error
		second, err = secret(ctx)
		return err == nil && string(second.Data[guestidentity.KubeconfigKey]) != string(first.Data[guestidentity.KubeconfigKey]), err
	})
	expires2 := annotationTime(t, second, guestidentity.AnnotationExpires)
	t.Logf("refreshed at %s, %s before the first token expired; the new one expires %s later", refreshedAt.Format(time.RFC3339),
		expires1.Sub(refreshedAt).Round(time.Second), expires2.Sub(expires1).Round(time.Second))
	if !refreshedAt.Before(expires1) || !expires2.After(expires1) {
		t.Errorf("refreshed at %s, first token expires %s, second %s: want a refresh before expiry, to a later one", refreshedAt, expires1, expires2)
	}
	for what, kc := range map[string][]byte{"the refreshed kubeconfig": second.Data[guestidentity.KubeconfigKey], "the first kubeconfig, not yet expired": first.Data[guestidentity.KubeconfigKey]} {
		if u, err := whoami(ctx, kc); err != nil || u != user {
			t.Errorf("%s is %q (%v), want %s", what, u, err, user)
		}
	}

	// The operator did not run again, and its Deployment is as it was.
	if got := runs.Load(); got != runsBefore {
		t.Errorf("the operator ran %d times during the refresh, want 0", got-runsBefore)
	}
	after, err := mgmtCS.AppsV1().Deployments(hcpNS).Get(ctx, dep.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != dep.ResourceVersion {
		t.Errorf("the Deployment changed during the refresh: resourceVersion %s -> %s", dep.ResourceVersion, after.ResourceVersion)
	}
}

// annotationTime reads an RFC 3339 time annotation of a guest kubeconfig Secret.
func annotationTime(t *testing.T, s *corev1.Secret, key string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s.Annotations[key])
	if err != nil {
		t.Fatalf("secret %s: annotation %s: %v", s.Name, key, err)
	}
	return v
}
