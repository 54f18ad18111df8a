package manager

import (
	"bytes"
	"cmp"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// HyperShift's kubeconfig of the guest cluster for the control plane's components: a
// Secret in the HCP namespace that the control-plane-operator writes once the guest's API
// server has its certificates, and rewrites when they rotate.
const (
	DefaultGuestKubeconfigSecret = "service-network-admin-kubeconfig"
	DefaultGuestKubeconfigKey    = "kubeconfig"
)

// GuestKubeconfigSecret names the Secret of the home cluster, in the hosted control plane's
// namespace, that holds the guest cluster's kubeconfig. The zero value is HyperShift's
// (DefaultGuestKubeconfigSecret, key DefaultGuestKubeconfigKey).
type GuestKubeconfigSecret struct {
	// Name is the Secret's name.
	Name string
	// Key is the key of its data that holds the kubeconfig.
	Key string
}

// withDefaults returns s with HyperShift's name and key where s leaves them empty.
func (s GuestKubeconfigSecret) withDefaults() GuestKubeconfigSecret {
	s.Name = cmp.Or(s.Name, DefaultGuestKubeconfigSecret)
	s.Key = cmp.Or(s.Key, DefaultGuestKubeconfigKey)
	return s
}

// Connector is where a late cluster's client configuration goes: a Manager.
type Connector interface {
	Connect(cluster string, cfg *rest.Config)
}

var _ Connector = (*Manager)(nil)

// GuestKubeconfigReconciler connects the guest cluster from the kubeconfig in a Secret of
// the home cluster: when the Secret appears, and again whenever its kubeconfig changes. A
// Secret that is deleted, or whose kubeconfig cannot be read, leaves the connection as it
// is (the error is logged and the Secret read again with backoff).
type GuestKubeconfigReconciler struct {
	// Reader reads the Secret (the controller-runtime manager's cache).
	Reader client.Reader
	// Secret is the Secret's namespace and name; Key the key of its kubeconfig.
	Secret types.NamespacedName
	Key    string
	// Cluster is the name of the cluster it connects.
	Cluster string
	// Connector receives each new configuration.
	Connector Connector

	last []byte
}

var _ reconcile.Reconciler = (*GuestKubeconfigReconciler)(nil)

// Reconcile reads the Secret and gives a changed kubeconfig to the Connector.
func (r *GuestKubeconfigReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	s := &corev1.Secret{}
	if err := r.Reader.Get(ctx, r.Secret, s); err != nil {
		if apierrors.IsNotFound(err) {
			log.V(1).Info("no guest kubeconfig Secret yet", "secret", r.Secret.String())
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("read the guest kubeconfig Secret %s: %w", r.Secret, err)
	}
	kubeconfig := s.Data[r.Key]
	if len(kubeconfig) == 0 {
		return reconcile.Result{}, fmt.Errorf("the guest kubeconfig Secret %s has no key %q", r.Secret, r.Key)
	}
	if bytes.Equal(kubeconfig, r.last) {
		return reconcile.Result{}, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("the guest kubeconfig Secret %s, key %q: %w", r.Secret, r.Key, err)
	}
	log.Info("guest kubeconfig read: connecting", "secret", r.Secret.String(), "cluster", r.Cluster, "server", cfg.Host, "resourceVersion", s.ResourceVersion)
	r.Connector.Connect(r.Cluster, cfg)
	r.last = bytes.Clone(kubeconfig)
	return reconcile.Result{}, nil
}

// SetupWithManager registers the reconciler with mgr, watching that one Secret. mgr's
// cache must hold Secrets of the Secret's namespace.
func (r *GuestKubeconfigReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("topolayer-guest-kubeconfig").
		For(&corev1.Secret{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.Secret.Namespace && o.GetName() == r.Secret.Name
		}))).
		Complete(r)
}
