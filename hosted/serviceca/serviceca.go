package serviceca

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// The service-ca operator's vocabulary: the annotations that ask for a ConfigMap's service
// CA bundle, and the key it is written under.
const (
	AnnotationInjectBeta  = "service.beta.openshift.io/inject-cabundle"
	AnnotationInjectAlpha = "service.alpha.openshift.io/inject-cabundle"
	KeyServiceCA          = "service-ca.crt"
)

// DefaultFieldManager is the field manager of the Injector's writes.
const DefaultFieldManager = "topolayer-service-ca"

// Options configure an Injector.
type Options struct {
	// Namespace is the HCP namespace: where the bundle is read and the ConfigMaps filled.
	Namespace string
	// ConfigMap and Key name the CA bundle HyperShift provides (oauth-master-ca-bundle,
	// ca.crt).
	ConfigMap, Key string
	// PlacedBy is the field manager of topolayer's applier: a ConfigMap none of whose
	// fields it manages was not placed by topolayer and is never filled.
	PlacedBy string
	// FieldManager is the field manager of the Injector's writes. Default
	// DefaultFieldManager.
	FieldManager string
}

// Injector fills the service CA bundle of the operands' ConfigMaps in one namespace.
type Injector struct {
	client kubernetes.Interface
	opts   Options
}

// New returns an Injector writing through client (the management cluster's).
func New(client kubernetes.Interface, o Options) *Injector {
	if o.FieldManager == "" {
		o.FieldManager = DefaultFieldManager
	}
	return &Injector{client: client, opts: o}
}

// Namespace is the namespace whose ConfigMaps the Injector fills.
func (in *Injector) Namespace() string { return in.opts.Namespace }

// Filled is a ConfigMap the Injector looked at, and whether it wrote it.
type Filled struct {
	// Name is the ConfigMap's name in the namespace.
	Name string
	// Written is true when the key did not hold the bundle and was written.
	Written bool
	// ResourceVersion is the ConfigMap's resourceVersion after the Injector looked at it.
	ResourceVersion string
}

// ErrNoBundle is wrapped by Inject's error when the CA bundle it copies is missing or empty.
var ErrNoBundle = errors.New("no CA bundle")

// Inject fills each of names (ConfigMaps of the namespace; missing ones are skipped) that
// asks for a service CA bundle and was placed by topolayer. It returns those it looked at,
// in the order of names. The bundle is read only when some ConfigMap asks for it.
func (in *Injector) Inject(ctx context.Context, names []string) ([]Filled, error) {
	cms := in.client.CoreV1().ConfigMaps(in.opts.Namespace)
	var out []Filled
	var bundle *string
	var errs []error
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("configmap %s/%s: %w", in.opts.Namespace, name, err))
			continue
		}
		if !AsksForBundle(cm) || !managedBy(cm, in.opts.PlacedBy) {
			continue
		}
		if bundle == nil {
			b, err := in.bundle(ctx)
			if err != nil {
				return out, err
			}
			bundle = &b
		}
		f := Filled{Name: name, ResourceVersion: cm.ResourceVersion}
		if cm.Data[KeyServiceCA] != *bundle {
			ac := corev1ac.ConfigMap(name, in.opts.Namespace).WithData(map[string]string{KeyServiceCA: *bundle})
			written, err := cms.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: in.opts.FieldManager, Force: true})
			if err != nil {
				errs = append(errs, fmt.Errorf("configmap %s/%s: write %s: %w", in.opts.Namespace, name, KeyServiceCA, err))
				continue
			}
			f.Written, f.ResourceVersion = true, written.ResourceVersion
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

// bundle reads the CA bundle the ConfigMaps get.
func (in *Injector) bundle(ctx context.Context) (string, error) {
	src, err := in.client.CoreV1().ConfigMaps(in.opts.Namespace).Get(ctx, in.opts.ConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("configmap %s/%s: %w: it does not exist", in.opts.Namespace, in.opts.ConfigMap, ErrNoBundle)
	}
	if err != nil {
		return "", fmt.Errorf("configmap %s/%s: %w", in.opts.Namespace, in.opts.ConfigMap, err)
	}
	b := src.Data[in.opts.Key]
	if b == "" {
		return "", fmt.Errorf("configmap %s/%s, key %q: %w", in.opts.Namespace, in.opts.ConfigMap, in.opts.Key, ErrNoBundle)
	}
	return b, nil
}

// AsksForBundle says whether cm asks the service-ca operator for its service CA bundle.
func AsksForBundle(cm *corev1.ConfigMap) bool {
	return AsksForBundleAnnotations(cm.Annotations)
}

// AsksForBundleAnnotations says whether a ConfigMap with these annotations asks for its
// service CA bundle: itself, or in what the hypershift profile withheld from the management
// cluster's own service-ca operator (transform.AnnotationWithheld).
func AsksForBundleAnnotations(annotations map[string]string) bool {
	asks := func(a map[string]string) bool {
		return a[AnnotationInjectBeta] == "true" || a[AnnotationInjectAlpha] == "true"
	}
	_, withheld, _ := transform.Withheld(annotations)
	return asks(annotations) || asks(withheld)
}

// managedBy says whether manager manages some field of cm.
func managedBy(cm *corev1.ConfigMap, manager string) bool {
	return manager != "" && slices.ContainsFunc(cm.ManagedFields, func(e metav1.ManagedFieldsEntry) bool { return e.Manager == manager })
}

// Planned returns the names of the ConfigMaps plan writes (creates, updates or applies) in
// namespace on cluster: the candidates of a plan just applied.
func Planned(plan *plans.Plan, cluster, namespace string) []string {
	var names []string
	for _, e := range plan.Entries {
		t := e.Target
		if e.Disposition != routing.Apply || e.Action == contract.ActionDelete || t.Cluster != cluster ||
			t.Group != "" || t.Resource != "configmaps" || t.Namespace != namespace || t.Name == "" {
			continue
		}
		names = append(names, t.Name)
	}
	return names
}
