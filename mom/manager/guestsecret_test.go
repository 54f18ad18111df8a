package manager

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// connections records what a GuestKubeconfigReconciler connects.
type connections []string

func (c *connections) Connect(cluster string, cfg *rest.Config) {
	*c = append(*c, cluster+" "+cfg.Host+" "+cfg.BearerToken)
}

func kubeconfig(server, token string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters: [{name: g, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: "` + token + `"}}]
contexts: [{name: g, context: {cluster: g, user: u}}]
current-context: g
`)
}

func TestGuestKubeconfigReconciler(t *testing.T) {
	key := types.NamespacedName{Namespace: "clusters-example", Name: DefaultGuestKubeconfigSecret}
	c := fake.NewClientBuilder().WithScheme(Scheme()).Build()
	var got connections
	r := &GuestKubeconfigReconciler{Reader: c, Secret: key, Key: DefaultGuestKubeconfigKey, Cluster: "guest", Connector: &got}
	reconcileOnce := func() error {
		_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
		return err
	}

	// No Secret yet: nothing connected, no error (no retry: its creation is watched).
	if err := reconcileOnce(); err != nil || len(got) != 0 {
		t.Fatalf("without the Secret: %v, connected %v", err, got)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Data: map[string][]byte{DefaultGuestKubeconfigKey: kubeconfig("https://guest:6443", "one")}}
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	// Created: connected; read again unchanged: not connected again.
	for range 2 {
		if err := reconcileOnce(); err != nil {
			t.Fatal(err)
		}
	}
	// Rotated: connected again with the new token.
	s.Data[DefaultGuestKubeconfigKey] = kubeconfig("https://guest:6443", "two")
	if err := c.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(); err != nil {
		t.Fatal(err)
	}
	// Broken: an error (retried with backoff), the connection left as it is.
	s.Data[DefaultGuestKubeconfigKey] = []byte("{not a kubeconfig")
	if err := c.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(); err == nil {
		t.Error("a broken kubeconfig: no error")
	}
	want := connections{"guest https://guest:6443 one", "guest https://guest:6443 two"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("connected %v, want %v", got, want)
	}
}

func TestGuestKubeconfigSecretDefaults(t *testing.T) {
	if d := (GuestKubeconfigSecret{}).withDefaults(); d.Name != "service-network-admin-kubeconfig" || d.Key != "kubeconfig" {
		t.Errorf("defaults %+v, want HyperShift's", d)
	}
	if d := (GuestKubeconfigSecret{Name: "mine"}).withDefaults(); d.Name != "mine" || d.Key != "kubeconfig" {
		t.Errorf("defaults of a named Secret %+v", d)
	}
}
