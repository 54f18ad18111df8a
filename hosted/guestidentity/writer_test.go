package guestidentity_test

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
)

const hcp = "clusters-example"

var identity = plans.GuestServiceAccount{Namespace: "openshift-sample", Name: "sample", Secret: guestidentity.SecretName("openshift-sample", "sample")}

// guest is a fake guest whose TokenRequest API grants at most lifetime, counting requests.
func guest(now func() time.Time, lifetime time.Duration, requests *int) *fake.Clientset {
	g := fake.NewClientset()
	g.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		*requests++
		asked := time.Duration(*a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).Spec.ExpirationSeconds) * time.Second
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
			Token:               "token-" + string(rune('0'+*requests)),
			ExpirationTimestamp: metav1.NewTime(now().Add(min(asked, lifetime))),
		}}, nil
	})
	return g
}

func management(objs ...runtime.Object) *fake.Clientset {
	return fake.NewClientset(append([]runtime.Object{&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "root-ca", Namespace: hcp}, Data: map[string]string{"ca.crt": "CA"},
	}}, objs...)...)
}

func options(clk *clocktesting.FakeClock) guestidentity.Options {
	return guestidentity.Options{
		Namespace: hcp, Operator: "sample-operator", Server: "https://kube-apiserver:6443", CAConfigMap: "root-ca", CAKey: "ca.crt",
		Expiration: time.Hour, Clock: clk,
		Owner: &metav1.OwnerReference{APIVersion: "hypershift.openshift.io/v1beta1", Kind: "HostedControlPlane", Name: "example", UID: "u1", Controller: ptr.To(true)},
	}
}

// TestEnsure: the Secret holds a kubeconfig of the guest identity with the guest's token, is
// marked and owned, and is due at 80% of the lifetime the guest returned (here shortened);
// before then Ensure leaves it alone; a Secret of that name without topolayer's marks is
// refused.
func TestEnsure(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var requests int
	m := management()
	w, err := guestidentity.NewForClients(m, guest(clk.Now, 30*time.Minute, &requests), options(clk))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	issued, err := w.Ensure(ctx, []plans.GuestServiceAccount{identity})
	if err != nil {
		t.Fatal(err)
	}
	if len(issued) != 1 || !issued[0].Written || !issued[0].ExpiresAt.Equal(clk.Now().Add(30*time.Minute)) || !issued[0].RefreshAt.Equal(clk.Now().Add(24*time.Minute)) {
		t.Fatalf("issued %+v: want written, expiring in the 30m the guest granted, due at 24m", issued)
	}
	s, err := m.CoreV1().Secrets(hcp).Get(ctx, identity.Secret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Labels[guestidentity.LabelGuestKubeconfig] != "true" || s.Labels[namespaces.LabelOperator] != "sample-operator" || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Name != "example" {
		t.Errorf("secret marks: labels %v owners %v", s.Labels, s.OwnerReferences)
	}
	kc, err := clientcmd.Load(s.Data[guestidentity.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	ctxt := kc.Contexts[kc.CurrentContext]
	if c := kc.Clusters[ctxt.Cluster]; c.Server != "https://kube-apiserver:6443" || string(c.CertificateAuthorityData) != "CA" {
		t.Errorf("cluster %+v", c)
	}
	if ctxt.Namespace != "openshift-sample" || ctxt.AuthInfo != "system:serviceaccount:openshift-sample:sample" || kc.AuthInfos[ctxt.AuthInfo].Token != "token-1" {
		t.Errorf("context %+v, user %+v", ctxt, kc.AuthInfos[ctxt.AuthInfo])
	}

	clk.Step(20 * time.Minute)
	if issued, err = w.Ensure(ctx, []plans.GuestServiceAccount{identity}); err != nil || issued[0].Written || requests != 1 {
		t.Errorf("before it is due: written %v, %d token requests, %v; want left alone", issued[0].Written, requests, err)
	}
	clk.Step(5 * time.Minute)
	if issued, err = w.Ensure(ctx, []plans.GuestServiceAccount{identity}); err != nil || !issued[0].Written || requests != 2 {
		t.Errorf("once due: written %v, %d token requests, %v; want a new token", issued[0].Written, requests, err)
	}

	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: identity.Secret, Namespace: hcp}}
	w, err = guestidentity.NewForClients(management(foreign), guest(clk.Now, time.Hour, &requests), options(clk))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Ensure(ctx, []plans.GuestServiceAccount{identity}); err == nil || !strings.Contains(err.Error(), "without topolayer's marks") {
		t.Errorf("a foreign secret: %v, want refused", err)
	}
}

// TestRefresher: a tracked Secret is rewritten when its clock reaches the due time, not before.
func TestRefresher(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var requests int
	w, err := guestidentity.NewForClients(management(), guest(clk.Now, time.Hour, &requests), options(clk))
	if err != nil {
		t.Fatal(err)
	}
	issued, err := w.Ensure(context.Background(), []plans.GuestServiceAccount{identity})
	if err != nil {
		t.Fatal(err)
	}
	r := guestidentity.NewRefresher(clk)
	refreshed := make(chan guestidentity.Issued, 1)
	r.Refreshed = func(is guestidentity.Issued, err error) {
		if err != nil {
			t.Error(err)
		}
		refreshed <- is
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Start(ctx) }()
	r.Track(w, issued)
	if due := r.Due()[identity.Secret]; !due.Equal(clk.Now().Add(48 * time.Minute)) {
		t.Fatalf("due at %s, want 48m after issue", due)
	}
	clk.Step(47 * time.Minute)
	select {
	case <-refreshed:
		t.Fatal("refreshed before it was due")
	case <-time.After(200 * time.Millisecond):
	}
	clk.Step(2 * time.Minute)
	select {
	case is := <-refreshed:
		if !is.Written || requests != 2 || !is.RefreshAt.Equal(clk.Now().Add(48*time.Minute)) {
			t.Errorf("refresh: %+v after %d token requests", is, requests)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not refreshed once due")
	}
}
