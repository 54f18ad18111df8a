package cluster

import (
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/hosted/openshiftapi"
	"github.com/topolayer/topolayer/hosted/shadow"
)

// BuiltinShadows are the cluster-scoped built-in kinds whose objects an operator may write on
// the management side, and which get a schemaless shadow (shadow.GenericCRD) on the
// management server: certificates.k8s.io certificatesigningrequests.
var BuiltinShadows = []schema.GroupVersionResource{
	{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"},
}

// builtinKinds are the kinds of BuiltinShadows.
var builtinKinds = map[schema.GroupResource]string{
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: "CertificateSigningRequest",
}

// PayloadCRDs reads the CRDs an OpenShift payload installs, from the openshift/api module
// topolayer was built with (openshiftapi.PayloadCRDFiles): what a guest or a standalone
// cluster serves.
func PayloadCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := openshiftapi.PayloadCRDFiles()
	if err != nil {
		return nil, fmt.Errorf("openshift/api CRDs: %w", err)
	}
	crds, err := shadow.ReadCRDs(files...)
	if err != nil {
		return nil, fmt.Errorf("openshift/api CRDs: %w", err)
	}
	return crds, nil
}

// ManagementNative are the namespaced payload CRDs an OpenShift management cluster serves
// as they are: Routes, through which HyperShift publishes a hosted control plane's
// services (its `oauth` Route stands for the OAuth server's).
var ManagementNative = []string{"routes.route.openshift.io"}

// ManagementCRDs returns what the management server serves besides its built-in APIs: the
// HostedControlPlane and ControlPlaneComponent CRDs, the shadow of every cluster-scoped CRD in payload, the shadows
// of BuiltinShadows and the CRDs of payload named in ManagementNative, unchanged. payload
// is not modified.
func ManagementCRDs(payload []*apiextensionsv1.CustomResourceDefinition) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds := []*apiextensionsv1.CustomResourceDefinition{HostedControlPlaneCRD(), ControlPlaneComponentCRD()}
	for _, orig := range payload {
		if slices.Contains(ManagementNative, orig.Name) {
			crds = append(crds, orig.DeepCopy())
			continue
		}
		if orig.Spec.Scope != apiextensionsv1.ClusterScoped {
			continue
		}
		s, err := shadow.CRD(orig)
		if err != nil {
			return nil, err
		}
		crds = append(crds, s)
	}
	for _, gvr := range BuiltinShadows {
		crds = append(crds, shadow.GenericCRD(gvr.GroupVersion().WithKind(builtinKinds[gvr.GroupResource()]), gvr.Resource))
	}
	return crds, nil
}

// HostedControlPlaneCRD returns a minimal CRD for HyperShift's HostedControlPlane
// (hypershift.openshift.io/v1beta1, namespaced): enough for the objects topolayer reads from
// it and the ownerReferences it sets to it, not HyperShift's full schema. Its spec has
// configuration (the guest's config.openshift.io settings, any fields kept), pullSecret (a
// reference to a Secret in the same namespace), releaseImage, and what the hypershift
// profile reads (controllerAvailabilityPolicy, nodeSelector, labels, tolerations); its status
// keeps any field and is served through the status subresource.
func HostedControlPlaneCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	anything := func(description string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Description: description, Type: "object", XPreserveUnknownFields: &preserve}
	}
	stringMap := func(description string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Description: description, Type: "object",
			AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}
	}
	toleration := anything("a toleration.")
	spec := apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"configuration": anything("configuration holds the guest cluster's config.openshift.io settings."),
			"pullSecret": {
				Description: "pullSecret names the Secret, in the HostedControlPlane's namespace, that holds the pull secret.",
				Type:        "object",
				Properties:  map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}},
			},
			"releaseImage": {Description: "releaseImage is the OpenShift release image of the hosted cluster.", Type: "string"},
			"controllerAvailabilityPolicy": {
				Description: "controllerAvailabilityPolicy is HighlyAvailable (the default) or SingleReplica: how many replicas the control plane's components run with.",
				Type:        "string",
				Enum:        []apiextensionsv1.JSON{{Raw: []byte(`"HighlyAvailable"`)}, {Raw: []byte(`"SingleReplica"`)}},
			},
			"nodeSelector": stringMap("nodeSelector is set on every control-plane pod."),
			"labels":       stringMap("labels are set on every control-plane pod."),
			"tolerations": {
				Description: "tolerations are added to every control-plane pod's.",
				Type:        "array",
				Items:       &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &toleration},
			},
		},
	}
	return hypershiftCRD(hosted.HostedControlPlaneGVR(), hosted.HostedControlPlaneGVK().Kind, "hostedcontrolplane", []string{"hcp", "hcps"},
		"HostedControlPlane stands for a hosted control plane in its namespace (a minimal schema for topolayer's tests and dev environment).",
		spec, anything("status is written by the control-plane operator."))
}

// ControlPlaneComponentCRD returns a minimal CRD for HyperShift's ControlPlaneComponent
// (hypershift.openshift.io/v1beta1, namespaced, short names cpc and cpcs), with the status
// fields of HyperShift's api/hypershift/v1beta1 (controlplanecomponent_types.go):
// conditions (metav1.Condition, a map keyed by type), version, resources (kind, group,
// name) and observedGeneration; an empty spec. Its status is served through the status
// subresource.
func ControlPlaneComponentCRD() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	mapKey := "map"
	atomic := "atomic"
	gvr := hosted.ControlPlaneComponentGVR()
	kind := hosted.ControlPlaneComponentGVK().Kind
	condition := apiextensionsv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"type", "status", "lastTransitionTime", "reason", "message"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"type":               str,
			"status":             {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"True"`)}, {Raw: []byte(`"False"`)}, {Raw: []byte(`"Unknown"`)}}},
			"observedGeneration": {Type: "integer", Format: "int64"},
			"lastTransitionTime": {Type: "string", Format: "date-time"},
			"reason":             str,
			"message":            str,
		},
	}
	resource := apiextensionsv1.JSONSchemaProps{
		Type:       "object",
		Required:   []string{"kind", "group", "name"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"kind": str, "group": str, "name": str},
	}
	status := apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"conditions": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &condition},
				XListType: &mapKey, XListMapKeys: []string{"type"}},
			"version":            str,
			"resources":          {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &resource}, XListType: &atomic},
			"observedGeneration": {Type: "integer", Format: "int64"},
		},
	}
	crd := hypershiftCRD(gvr, kind, "controlplanecomponent", []string{"cpc", "cpcs"},
		"ControlPlaneComponent specifies the state of a ControlPlane Component (HyperShift's status fields; a minimal schema for topolayer's tests and dev environment).",
		apiextensionsv1.JSONSchemaProps{Type: "object"}, status)
	crd.Spec.Versions[0].AdditionalPrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Version", Type: "string", JSONPath: ".status.version"},
		{Name: "Available", Type: "string", JSONPath: `.status.conditions[?(@.type=="Available")].status`},
		{Name: "RolloutComplete", Type: "string", JSONPath: `.status.conditions[?(@.type=="RolloutComplete")].status`},
		{Name: "Message", Type: "string", JSONPath: `.status.conditions[?(@.type=="Available")].message`},
	}
	return crd
}

// hypershiftCRD returns the CRD of a namespaced HyperShift kind: the resource gvr, its kind
// (and kind+"List"), singular and short names, one served and stored version whose schema,
// described by description, has the given spec and status beside apiVersion, kind and
// metadata, and the status subresource.
func hypershiftCRD(gvr schema.GroupVersionResource, kind, singular string, shortNames []string, description string, spec, status apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: gvr.Resource + "." + gvr.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gvr.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind:       kind,
				ListKind:   kind + "List",
				Plural:     gvr.Resource,
				Singular:   singular,
				ShortNames: shortNames,
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name:    gvr.Version,
				Served:  true,
				Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Description: description,
					Type:        "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"apiVersion": {Type: "string"},
						"kind":       {Type: "string"},
						"metadata":   {Type: "object"},
						"spec":       spec,
						"status":     status,
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}
