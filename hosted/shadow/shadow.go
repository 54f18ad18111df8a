package shadow

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/topolayer/topolayer/namespaces"
)

// LabelShadowOf and AnnotationShadowOf record, on a shadow CRD, the name of the CRD it
// shadows (for a built-in kind, its resource.group, or its resource alone in the core group).
// The annotation always holds the name. The label holds it too when it is a valid label value
// (at most 63 characters, which every CRD name in openshift/api is); otherwise the label
// holds ShadowOfLabelValue(name), a truncated prefix and a hash. Read the annotation to learn
// what a shadow shadows; select shadows with the label.
const (
	LabelShadowOf      = "topolayer.dev/shadow-of"
	AnnotationShadowOf = "topolayer.dev/shadow-of"
)

// ErrNamespaced is returned by CRD for a namespaced CRD: only cluster-scoped kinds get
// shadows, since a namespaced kind can be mapped into H as it is.
var ErrNamespaced = errors.New("namespaced: only cluster-scoped kinds get shadows")

// crdTypeMeta is the type of every CRD this package builds or writes.
var crdTypeMeta = metav1.TypeMeta{
	APIVersion: apiextensionsv1.SchemeGroupVersion.String(),
	Kind:       "CustomResourceDefinition",
}

// caInjectionAnnotations ask a controller to fill a conversion webhook's CA bundle. A shadow
// has no conversion webhook, so they are dropped.
var caInjectionAnnotations = []string{
	"service.beta.openshift.io/inject-cabundle",
	"cert-manager.io/inject-ca-from",
	"cert-manager.io/inject-ca-from-secret",
	"cert-manager.io/inject-apiserver-ca",
}

// CRD returns the shadow of the cluster-scoped CRD orig, which is not modified:
//
//   - spec.group is namespaces.ShadowGroup(group) and metadata.name plural.<that group>;
//   - spec.scope is Namespaced (a namespaced orig gives an error wrapping ErrNamespaced, and a
//     CRD that already is a shadow an error too);
//   - names keep kind, listKind, plural and singular, but lose shortNames and categories,
//     which would clash with the original's on the same API server;
//   - every version keeps its schema, subresources (status, scale), printer columns,
//     selectable fields and deprecation as they are, including CEL rules that pin the object
//     name (self.metadata.name == 'cluster'): a shadow object keeps its standalone name;
//   - spec.conversion is strategy None: a shadow serves no conversion webhook. If orig
//     converts with a webhook and has more than one version, only its storage version is
//     kept, since strategy None would only relabel an object stored in one version's schema
//     as another; it is an error if that storage version is not served. Callers learn of the
//     drop by comparing len(Spec.Versions);
//   - metadata keeps the name-independent parts only: labels, and annotations except those
//     of the OpenShift payload (api-approved.openshift.io, and every key prefixed by
//     release.openshift.io/ or any *.release.openshift.io/ such as include. and exclude.,
//     capability.openshift.io/ or api.openshift.io/), kubectl's last-applied-configuration
//     (it describes the original) and the CA-injection annotations of conversion webhooks.
//     Everything the API server fills (uid, resourceVersion, generation, creationTimestamp,
//     managedFields, finalizers, ownerReferences, deletion fields) is cleared, and so is
//     status;
//   - the label and annotation LabelShadowOf/AnnotationShadowOf name orig.
func CRD(orig *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	if orig == nil {
		return nil, errors.New("shadow of a nil CustomResourceDefinition")
	}
	if orig.Name == "" {
		return nil, fmt.Errorf("crd of kind %q: no metadata.name", orig.Spec.Names.Kind)
	}
	switch orig.Spec.Scope {
	case apiextensionsv1.ClusterScoped:
	case apiextensionsv1.NamespaceScoped:
		return nil, fmt.Errorf("crd %s: %w", orig.Name, ErrNamespaced)
	default:
		return nil, fmt.Errorf("crd %s: spec.scope %q: must be Cluster", orig.Name, orig.Spec.Scope)
	}
	if _, ok := namespaces.IsShadowGroup(orig.Spec.Group); ok {
		return nil, fmt.Errorf("crd %s: spec.group %q is already a shadow group", orig.Name, orig.Spec.Group)
	}
	if orig.Spec.Names.Plural == "" {
		return nil, fmt.Errorf("crd %s: spec.names.plural is empty", orig.Name)
	}

	in := orig.DeepCopy()
	spec := in.Spec
	spec.Group = namespaces.ShadowGroup(orig.Spec.Group)
	spec.Scope = apiextensionsv1.NamespaceScoped
	spec.Names.ShortNames = nil
	spec.Names.Categories = nil
	if c := orig.Spec.Conversion; c != nil && c.Strategy == apiextensionsv1.WebhookConverter && len(spec.Versions) > 1 {
		v, err := storageVersion(orig)
		if err != nil {
			return nil, err
		}
		spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{v}
	}
	spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}

	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   crdTypeMeta,
		ObjectMeta: shadowMeta(spec.Names.Plural+"."+spec.Group, orig.Name, in.Labels, in.Annotations),
		Spec:       spec,
	}, nil
}

// storageVersion returns the one version of crd to keep when its conversion webhook goes.
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) (apiextensionsv1.CustomResourceDefinitionVersion, error) {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		if !v.Served {
			return v, fmt.Errorf("crd %s: storage version %s is not served, and a shadow, without the conversion webhook, can serve no other", crd.Name, v.Name)
		}
		return *v.DeepCopy(), nil
	}
	return apiextensionsv1.CustomResourceDefinitionVersion{}, fmt.Errorf("crd %s: no storage version in spec.versions", crd.Name)
}

// shadowMeta returns the metadata of a shadow named name, of the original named of, keeping
// the original's labels and its annotations that are not the payload's.
func shadowMeta(name, of string, labels, annotations map[string]string) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{},
		Annotations: map[string]string{},
	}
	for k, v := range labels {
		meta.Labels[k] = v
	}
	for k, v := range annotations {
		if !droppedAnnotation(k) {
			meta.Annotations[k] = v
		}
	}
	meta.Labels[LabelShadowOf] = ShadowOfLabelValue(of)
	meta.Annotations[AnnotationShadowOf] = of
	return meta
}

// droppedAnnotation reports whether a shadow leaves out the original's annotation key.
func droppedAnnotation(key string) bool {
	if key == "api-approved.openshift.io" || key == "kubectl.kubernetes.io/last-applied-configuration" {
		return true
	}
	for _, k := range caInjectionAnnotations {
		if key == k {
			return true
		}
	}
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	switch {
	case prefix == "release.openshift.io", strings.HasSuffix(prefix, ".release.openshift.io"):
		return true // release.openshift.io/feature-set, include.release.openshift.io/..., exclude.release.openshift.io/...
	case prefix == "capability.openshift.io", prefix == "api.openshift.io":
		return true
	}
	return false
}

// ShadowOfLabelValue returns the value of the LabelShadowOf label for the original named
// name: name itself when it is a valid label value, otherwise a prefix of name and a hash of
// all of it, at most 63 characters.
func ShadowOfLabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(sum[:])[:10]
	prefix := strings.TrimRight(name[:min(len(name), validation.LabelValueMaxLength-len(hash)-1)], "-_.")
	if v := prefix + "-" + hash; prefix != "" && len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	return hash
}

// GenericCRD returns a shadow CRD for a cluster-scoped built-in kind, which has no CRD to
// start from (core nodes, certificates.k8s.io certificatesigningrequests): group
// namespaces.ShadowGroup(gvk.Group), kind gvk.Kind, the given plural, one served and stored
// version gvk.Version, Namespaced, and the status subresource. Its schema checks nothing:
// spec and status keep any field (x-kubernetes-preserve-unknown-fields), and any other
// top-level field is pruned, so it suits kinds whose content is in spec and status only. The
// API server's own validation of the built-in kind does not apply to the shadow. Run
// Validate on the result: GenericCRD does not check gvk and plural.
func GenericCRD(gvk schema.GroupVersionKind, plural string) *apiextensionsv1.CustomResourceDefinition {
	group := namespaces.ShadowGroup(gvk.Group)
	of := schema.GroupResource{Group: gvk.Group, Resource: plural}.String()
	preserve := true
	anything := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   crdTypeMeta,
		ObjectMeta: shadowMeta(plural+"."+group, of, nil, nil),
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind:     gvk.Kind,
				ListKind: gvk.Kind + "List",
				Plural:   plural,
				Singular: strings.ToLower(gvk.Kind),
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name:    gvk.Version,
				Served:  true,
				Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Description: fmt.Sprintf("%s is the shadow of the built-in %s %s: its spec and status are not validated.", gvk.Kind, of, gvk.Version),
					Type:        "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"apiVersion": {Type: "string"},
						"kind":       {Type: "string"},
						"metadata":   {Type: "object"},
						"spec":       anything,
						"status":     anything,
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
	}
}
