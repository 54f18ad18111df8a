package guestidentity

import (
	"context"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreac "k8s.io/client-go/applyconfigurations/core/v1"
	metaac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
)

// Marks of a guest kubeconfig Secret.
const (
	// LabelGuestKubeconfig, "true", marks a Secret as a guest kubeconfig topolayer writes.
	LabelGuestKubeconfig = "topolayer.dev/guest-kubeconfig"
	// AnnotationServiceAccount names the guest service account, NAMESPACE/NAME.
	AnnotationServiceAccount = "topolayer.dev/guest-service-account"
	// AnnotationExpires is when the token expires, as the guest returned it (RFC 3339).
	AnnotationExpires = "topolayer.dev/token-expires"
	// AnnotationRefresh is when the Secret is due for a new token (RFC 3339).
	AnnotationRefresh = "topolayer.dev/token-refresh"
	// AnnotationServer records the server and CA ConfigMap the kubeconfig was written with,
	// so that a configuration change rewrites it.
	AnnotationServer = "topolayer.dev/guest-server"
	// FieldManager owns the Secrets' fields.
	FieldManager = "topolayer-guest-identity"
	// RefreshFraction of a token's lifetime, from its issue to the expiry the guest
	// returned, passes before it is refreshed.
	RefreshFraction = 0.8
)

// Options configure a Writer.
type Options struct {
	// Namespace is the HCP namespace on the management cluster, where the Secrets go and the
	// CA ConfigMap is.
	Namespace string
	// Operator is the operator whose operands act as the identities; it labels the Secrets.
	Operator string
	// Owner, when set, is the ownerReference every Secret gets (the HostedControlPlane).
	Owner *metav1.OwnerReference
	// Server is the guest API server's address as the pods in Namespace reach it.
	Server string
	// CAConfigMap and CAKey locate the guest API server's CA bundle in Namespace.
	CAConfigMap, CAKey string
	// Expiration is the lifetime asked of each token; the guest may shorten it.
	Expiration time.Duration
	// Clock tells the time of issue and of refresh; nil is the real clock.
	Clock clock.PassiveClock
}

// Writer writes the guest kubeconfig Secrets of one operator's identities.
type Writer struct {
	opts              Options
	management, guest kubernetes.Interface
}

// New returns a Writer that writes Secrets on the management cluster and asks the guest
// for tokens, each as its configuration's own identity.
func New(management, guest *rest.Config, o Options) (*Writer, error) {
	if management == nil || guest == nil {
		return nil, errors.New("guest identity: the management and the guest client configurations are required")
	}
	m, err := kubernetes.NewForConfig(management)
	if err != nil {
		return nil, fmt.Errorf("guest identity: management client: %w", err)
	}
	g, err := kubernetes.NewForConfig(guest)
	if err != nil {
		return nil, fmt.Errorf("guest identity: guest client: %w", err)
	}
	return NewForClients(m, g, o)
}

// NewForClients is New over existing clients.
func NewForClients(management, guest kubernetes.Interface, o Options) (*Writer, error) {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("guest identity: the HCP namespace is required"))
	}
	if o.Server == "" || o.CAConfigMap == "" || o.CAKey == "" {
		errs = append(errs, errors.New("guest identity: the guest server and its CA ConfigMap and key are required"))
	}
	if o.Expiration <= 0 {
		errs = append(errs, fmt.Errorf("guest identity: token expiration %s: must be positive", o.Expiration))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &Writer{opts: o, management: management, guest: guest}, nil
}

// Issued is a kubeconfig Secret as written (or found current).
type Issued struct {
	// Identity is the guest service account.
	Identity plans.GuestServiceAccount
	// Operator is the operator whose operands act as it.
	Operator string
	// ExpiresAt is when its token expires; RefreshAt when it is due for a new one.
	ExpiresAt, RefreshAt time.Time
	// Written is false when the Secret was current and left as it was.
	Written bool
}

// Ensure writes the kubeconfig Secret of every identity whose Secret is missing, due for
// refresh, written for another server, or not a kubeconfig; the others are left alone. It
// returns what each Secret holds now, and every failure joined.
func (w *Writer) Ensure(ctx context.Context, ids []plans.GuestServiceAccount) ([]Issued, error) {
	var out []Issued
	var errs []error
	for _, id := range ids {
		is, err := w.ensure(ctx, id, false)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, is)
	}
	return out, errors.Join(errs...)
}

// Refresh writes the kubeconfig Secret of id with a new token, due or not.
func (w *Writer) Refresh(ctx context.Context, id plans.GuestServiceAccount) (Issued, error) {
	return w.ensure(ctx, id, true)
}

func (w *Writer) ensure(ctx context.Context, id plans.GuestServiceAccount, force bool) (Issued, error) {
	where := fmt.Sprintf("secret %s/%s (guest service account %s/%s)", w.opts.Namespace, id.Secret, id.Namespace, id.Name)
	is := Issued{Identity: id, Operator: w.opts.Operator}
	existing, err := w.management.CoreV1().Secrets(w.opts.Namespace).Get(ctx, id.Secret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return is, fmt.Errorf("%s: read: %w", where, err)
	case existing.Labels[LabelGuestKubeconfig] != "true" || existing.Labels[namespaces.LabelOperator] != w.opts.Operator:
		return is, fmt.Errorf("%s: exists without topolayer's marks for operator %s (labels %v): refusing to overwrite it", where, w.opts.Operator, existing.Labels)
	}
	if existing != nil && !force {
		expires, err1 := time.Parse(time.RFC3339, existing.Annotations[AnnotationExpires])
		refresh, err2 := time.Parse(time.RFC3339, existing.Annotations[AnnotationRefresh])
		if err1 == nil && err2 == nil && w.opts.Clock.Now().Before(refresh) && existing.Annotations[AnnotationServer] == w.serverMark() &&
			existing.Annotations[AnnotationServiceAccount] == id.Namespace+"/"+id.Name && len(existing.Data[KubeconfigKey]) > 0 {
			is.ExpiresAt, is.RefreshAt = expires, refresh
			return is, nil
		}
	}

	ca, err := w.management.CoreV1().ConfigMaps(w.opts.Namespace).Get(ctx, w.opts.CAConfigMap, metav1.GetOptions{})
	if err != nil {
		return is, fmt.Errorf("%s: the guest CA: configmap %s/%s: %w", where, w.opts.Namespace, w.opts.CAConfigMap, err)
	}
	bundle := ca.Data[w.opts.CAKey]
	if bundle == "" {
		return is, fmt.Errorf("%s: the guest CA: configmap %s/%s has no key %q", where, w.opts.Namespace, w.opts.CAConfigMap, w.opts.CAKey)
	}

	issuedAt := w.opts.Clock.Now()
	tr, err := w.guest.CoreV1().ServiceAccounts(id.Namespace).CreateToken(ctx, id.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(w.opts.Expiration / time.Second))},
	}, metav1.CreateOptions{})
	if err != nil {
		return is, fmt.Errorf("%s: token request on the guest: serviceaccounts %s/%s: %w", where, id.Namespace, id.Name, err)
	}
	is.ExpiresAt = tr.Status.ExpirationTimestamp.Time
	if !is.ExpiresAt.After(issuedAt) {
		return is, fmt.Errorf("%s: token request on the guest: serviceaccounts %s/%s: expires at %s, not after its issue at %s", where, id.Namespace, id.Name, is.ExpiresAt, issuedAt)
	}
	is.RefreshAt = RefreshTime(issuedAt, is.ExpiresAt)

	kubeconfig, err := Kubeconfig(w.opts.Server, []byte(bundle), id, tr.Status.Token)
	if err != nil {
		return is, fmt.Errorf("%s: %w", where, err)
	}
	secret := coreac.Secret(id.Secret, w.opts.Namespace).
		WithLabels(map[string]string{LabelGuestKubeconfig: "true", namespaces.LabelOperator: w.opts.Operator}).
		WithAnnotations(map[string]string{
			AnnotationServiceAccount: id.Namespace + "/" + id.Name,
			AnnotationExpires:        is.ExpiresAt.UTC().Format(time.RFC3339),
			AnnotationRefresh:        is.RefreshAt.UTC().Format(time.RFC3339),
			AnnotationServer:         w.serverMark(),
		}).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{KubeconfigKey: kubeconfig})
	if o := w.opts.Owner; o != nil {
		secret.WithOwnerReferences(metaac.OwnerReference().WithAPIVersion(o.APIVersion).WithKind(o.Kind).WithName(o.Name).WithUID(o.UID).
			WithController(ptr.Deref(o.Controller, false)).WithBlockOwnerDeletion(ptr.Deref(o.BlockOwnerDeletion, false)))
	}
	if _, err := w.management.CoreV1().Secrets(w.opts.Namespace).Apply(ctx, secret, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return is, fmt.Errorf("%s: write: %w", where, err)
	}
	is.Written = true
	return is, nil
}

// serverMark is what AnnotationServer records.
func (w *Writer) serverMark() string {
	return w.opts.Server + " " + w.opts.CAConfigMap + "/" + w.opts.CAKey
}

// RefreshTime is when a token issued at issuedAt and expiring at expiresAt is due for
// refresh: after RefreshFraction of its lifetime.
func RefreshTime(issuedAt, expiresAt time.Time) time.Time {
	return issuedAt.Add(time.Duration(float64(expiresAt.Sub(issuedAt)) * RefreshFraction))
}

// Kubeconfig returns the kubeconfig of a guest identity: one cluster (server, CA bundle),
// one user (the bound token), one current context in the service account's namespace.
func Kubeconfig(server string, caBundle []byte, id plans.GuestServiceAccount, token string) ([]byte, error) {
	const name = "guest"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caBundle}
	cfg.AuthInfos[id.User()] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: id.User(), Namespace: id.Namespace}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write the kubeconfig: %w", err)
	}
	return data, nil
}
