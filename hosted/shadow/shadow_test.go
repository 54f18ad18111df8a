package shadow

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/hosted/openshiftapi"
	"github.com/topolayer/topolayer/namespaces"
)

// widgetCRD is a small cluster-scoped CRD with everything a shadow keeps or drops.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  uid: 0b5e3c1e-0000-4000-8000-000000000001
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2026-01-02T03:04:05Z"
  finalizers: [customresourcecleanup.apiextensions.k8s.io]
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: 0b5e3c1e-0000-4000-8000-000000000002}]
  managedFields: [{manager: kubectl, operation: Apply, apiVersion: apiextensions.k8s.io/v1}]
  labels:
    app: widgets
  annotations:
    api-approved.openshift.io: https://github.com/openshift/api/pull/1
    api.openshift.io/merged-by-featuregates: "true"
    include.release.openshift.io/self-managed-high-availability: "true"
    exclude.release.openshift.io/internal-openshift-hosted: "true"
    release.openshift.io/feature-set: Default
    capability.openshift.io/name: Widgets
    service.beta.openshift.io/inject-cabundle: "true"
    kubectl.kubernetes.io/last-applied-configuration: "{}"
    openshift.io/operator-managed: "true"
    description: Widgets of the example operator.
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget, shortNames: [wd], categories: [all]}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: self.metadata.name == 'cluster'
          message: there is one widget, named cluster
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
          status:
            type: object
            properties:
              ready: {type: boolean}
    subresources:
      status: {}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    selectableFields:
    - jsonPath: .spec.size
status:
  acceptedNames: {kind: Widget, plural: widgets}
  storedVersions: [v1]
`

// decodeCRDString decodes one CRD from YAML, or fails the test.
func decodeCRDString(t *testing.T, s string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(s), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// readOpenShiftAPICRD reads the Default manifest of one openshift/api CRD.
func readOpenShiftAPICRD(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	file, err := openshiftapi.CRDFile(name)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := ReadCRDs(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 1 || crds[0].Name != name {
		t.Fatalf("%s: want one CRD %s, got %d", file, name, len(crds))
	}
	return crds[0]
}

// TestCRDOpenShiftAPI: the shadows of openshift/api's CRDs are valid, Namespaced, in the
// shadow group, and keep kind, names, every version (schema, subresources, columns) as they
// are.
func TestCRDOpenShiftAPI(t *testing.T) {
	tests := map[string]struct {
		name       string
		wantShadow string
	}{
		"operator CR":      {name: "authentications.operator.openshift.io", wantShadow: "authentications.operator.openshift.io.shadow.topolayer.dev"},
		"ClusterOperator":  {name: "clusteroperators.config.openshift.io", wantShadow: "clusteroperators.config.openshift.io.shadow.topolayer.dev"},
		"config singleton": {name: "ingresses.config.openshift.io", wantShadow: "ingresses.config.openshift.io.shadow.topolayer.dev"},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			orig := readOpenShiftAPICRD(t, tc.name)
			before := orig.DeepCopy()
			s, err := CRD(orig)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, orig); diff != "" {
				t.Errorf("CRD modified its input (-before +after):\n%s", diff)
			}
			checkValid(t, s)
			if s.Name != tc.wantShadow || s.Spec.Group != namespaces.ShadowGroup(orig.Spec.Group) || s.Name != s.Spec.Names.Plural+"."+s.Spec.Group {
				t.Errorf("name %q, group %q; want %q in group %q", s.Name, s.Spec.Group, tc.wantShadow, namespaces.ShadowGroup(orig.Spec.Group))
			}
			if s.Spec.Scope != apiextensionsv1.NamespaceScoped {
				t.Errorf("scope %q, want Namespaced", s.Spec.Scope)
			}
			wantNames := orig.Spec.Names
			wantNames.ShortNames, wantNames.Categories = nil, nil
			if diff := cmp.Diff(wantNames, s.Spec.Names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if len(s.Spec.Versions) != len(orig.Spec.Versions) {
				t.Fatalf("%d versions, want %d", len(s.Spec.Versions), len(orig.Spec.Versions))
			}
			for i, v := range s.Spec.Versions {
				if diff := cmp.Diff(orig.Spec.Versions[i].Schema, v.Schema); diff != "" {
					t.Errorf("version %s schema (-orig +shadow):\n%s", v.Name, diff)
				}
				if diff := cmp.Diff(orig.Spec.Versions[i], v); diff != "" {
					t.Errorf("version %s (-orig +shadow):\n%s", v.Name, diff)
				}
				if v.Subresources == nil || v.Subresources.Status == nil {
					t.Errorf("version %s: no status subresource", v.Name)
				}
			}
			if c := s.Spec.Conversion; c == nil || c.Strategy != apiextensionsv1.NoneConverter || c.Webhook != nil {
				t.Errorf("conversion %+v, want strategy None", c)
			}
			if got := s.Labels[LabelShadowOf]; got != tc.name {
				t.Errorf("label %s=%q, want %q", LabelShadowOf, got, tc.name)
			}
			if got := s.Annotations[AnnotationShadowOf]; got != tc.name {
				t.Errorf("annotation %s=%q, want %q", AnnotationShadowOf, got, tc.name)
			}
			for k := range s.Annotations {
				if strings.Contains(k, "openshift.io") {
					t.Errorf("payload annotation %s kept", k)
				}
			}
		})
	}
}

// TestCRDMetadata: a shadow keeps labels and the original's own annotations, and nothing the
// payload or the API server put there.
func TestCRDMetadata(t *testing.T) {
	s, err := CRD(decodeCRDString(t, widgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	want := metav1.ObjectMeta{
		Name: "widgets.example.com.shadow.topolayer.dev",
		Labels: map[string]string{
			"app":         "widgets",
			LabelShadowOf: "widgets.example.com",
		},
		Annotations: map[string]string{
			"openshift.io/operator-managed": "true",
			"description":                   "Widgets of the example operator.",
			AnnotationShadowOf:              "widgets.example.com",
		},
	}
	if diff := cmp.Diff(want, s.ObjectMeta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(apiextensionsv1.CustomResourceDefinitionStatus{}, s.Status); diff != "" {
		t.Errorf("status not cleared (-want +got):\n%s", diff)
	}
	if s.APIVersion != "apiextensions.k8s.io/v1" || s.Kind != "CustomResourceDefinition" {
		t.Errorf("apiVersion %q, kind %q", s.APIVersion, s.Kind)
	}
	if s.Spec.Names.ShortNames != nil || s.Spec.Names.Categories != nil {
		t.Errorf("shortNames %v, categories %v kept", s.Spec.Names.ShortNames, s.Spec.Names.Categories)
	}
	rules := s.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations
	if len(rules) != 1 || rules[0].Rule != "self.metadata.name == 'cluster'" {
		t.Errorf("name-pinning rule not kept: %+v", rules)
	}
	checkValid(t, s)
}

// TestCRDConversion: a shadow serves no conversion webhook; without it, only the storage
// version of a webhook-converted CRD is kept.
func TestCRDConversion(t *testing.T) {
	twoVersions := func(strategy apiextensionsv1.ConversionStrategyType, storage string, storageServed bool) *apiextensionsv1.CustomResourceDefinition {
		crd := decodeCRDString(t, widgetCRD)
		v1 := crd.Spec.Versions[0]
		v1alpha1 := *v1.DeepCopy()
		v1alpha1.Name = "v1alpha1"
		v1.Storage, v1alpha1.Storage = storage == "v1", storage == "v1alpha1"
		if storage == "v1" {
			v1.Served = storageServed
		} else {
			v1alpha1.Served = storageServed
		}
		crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{v1, v1alpha1}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: strategy}
		if strategy == apiextensionsv1.WebhookConverter {
			path := "/convert"
			crd.Spec.Conversion.Webhook = &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "ns", Name: "svc", Path: &path}},
				ConversionReviewVersions: []string{"v1"},
			}
		}
		return crd
	}
	tests := map[string]struct {
		in           *apiextensionsv1.CustomResourceDefinition
		wantVersions []string
		wantErr      string
	}{
		"no conversion":                     {in: decodeCRDString(t, widgetCRD), wantVersions: []string{"v1"}},
		"None keeps every version":          {in: twoVersions(apiextensionsv1.NoneConverter, "v1", true), wantVersions: []string{"v1", "v1alpha1"}},
		"webhook keeps the storage version": {in: twoVersions(apiextensionsv1.WebhookConverter, "v1alpha1", true), wantVersions: []string{"v1alpha1"}},
		"webhook, storage version not served": {
			in:      twoVersions(apiextensionsv1.WebhookConverter, "v1", false),
			wantErr: "crd widgets.example.com: storage version v1 is not served",
		},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			if err := serverValidate(tc.in); err != nil {
				t.Fatalf("input is not valid: %v", err)
			}
			s, err := CRD(tc.in)
			if tc.wantErr != "" {
				if !errorContains(err, tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range s.Spec.Versions {
				got = append(got, v.Name)
			}
			if diff := cmp.Diff(tc.wantVersions, got); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(&apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}, s.Spec.Conversion); diff != "" {
				t.Errorf("conversion (-want +got):\n%s", diff)
			}
			checkValid(t, s)
		})
	}
}

// errorContains reports whether err is an error whose message contains want.
func errorContains(err error, want string) bool {
	return err != nil && strings.Contains(err.Error(), want)
}

// TestCRDRefused: only cluster-scoped, not yet shadowed CRDs get shadows.
func TestCRDRefused(t *testing.T) {
	crd := func(mutate func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
		c := decodeCRDString(t, widgetCRD)
		mutate(c)
		return c
	}
	tests := map[string]struct {
		in      *apiextensionsv1.CustomResourceDefinition
		wantIs  error
		wantErr string
	}{
		"namespaced": {
			in:      crd(func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = apiextensionsv1.NamespaceScoped }),
			wantIs:  ErrNamespaced,
			wantErr: "crd widgets.example.com: namespaced",
		},
		"already a shadow": {
			in: crd(func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Spec.Group = namespaces.ShadowGroup(c.Spec.Group)
				c.Name = "widgets." + c.Spec.Group
			}),
			wantErr: "already a shadow group",
		},
		"no scope": {in: crd(func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "" }), wantErr: `spec.scope "": must be Cluster`},
		"no name":  {in: crd(func(c *apiextensionsv1.CustomResourceDefinition) { c.Name = "" }), wantErr: "no metadata.name"},
		"nil":      {in: nil, wantErr: "nil CustomResourceDefinition"},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			s, err := CRD(tc.in)
			if !errorContains(err, tc.wantErr) || s != nil {
				t.Fatalf("CRD() = %v, %v; want error %q", s, err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
		})
	}
	t.Run("openshift/api namespaced CRD", func(t *testing.T) {
		_, err := CRD(readOpenShiftAPICRD(t, "podnetworkconnectivitychecks.controlplane.operator.openshift.io"))
		if !errors.Is(err, ErrNamespaced) {
			t.Fatalf("error %v, want ErrNamespaced", err)
		}
	})
}

// TestShadowOfLabelValue: valid label values always; the name itself when it fits.
func TestShadowOfLabelValue(t *testing.T) {
	long := strings.Repeat("a", 50) + ".example.com"
	tests := map[string]struct {
		name string
		want string // "" when hashed
	}{
		"CRD name":               {name: "authentications.operator.openshift.io", want: "authentications.operator.openshift.io"},
		"63 characters":          {name: "podnetworkconnectivitychecks.controlplane.operator.openshift.io", want: "podnetworkconnectivitychecks.controlplane.operator.openshift.io"},
		"core resource":          {name: "nodes", want: "nodes"},
		"too long":               {name: long + "x"},
		"too long, other suffix": {name: long + "y"},
		"not a label value":      {name: "-" + strings.Repeat("b", 70)},
	}
	seen := map[string]string{}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			got := ShadowOfLabelValue(tc.name)
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Errorf("%q: %v", got, errs)
			}
			if tc.want != "" && got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if got != ShadowOfLabelValue(tc.name) {
				t.Error("not deterministic")
			}
		})
		v := ShadowOfLabelValue(tc.name)
		if other, dup := seen[v]; dup {
			t.Errorf("%q and %q share the label value %q", other, tc.name, v)
		}
		seen[v] = tc.name
	}
}

// TestGenericCRD: shadows of built-in kinds validate, and accept anything in spec and status.
func TestGenericCRD(t *testing.T) {
	tests := map[string]struct {
		gvk      schema.GroupVersionKind
		plural   string
		wantName string
		wantOf   string
	}{
		"core nodes": {
			gvk: schema.GroupVersionKind{Version: "v1", Kind: "Node"}, plural: "nodes",
			wantName: "nodes.core.shadow.topolayer.dev", wantOf: "nodes",
		},
		"certificatesigningrequests": {
			gvk: schema.GroupVersionKind{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest"}, plural: "certificatesigningrequests",
			wantName: "certificatesigningrequests.certificates.k8s.io.shadow.topolayer.dev", wantOf: "certificatesigningrequests.certificates.k8s.io",
		},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			s := GenericCRD(tc.gvk, tc.plural)
			checkValid(t, s)
			if s.Name != tc.wantName || s.Spec.Scope != apiextensionsv1.NamespaceScoped || s.Spec.Names.Kind != tc.gvk.Kind {
				t.Errorf("name %q, scope %q, kind %q", s.Name, s.Spec.Scope, s.Spec.Names.Kind)
			}
			if s.Labels[LabelShadowOf] != tc.wantOf || s.Annotations[AnnotationShadowOf] != tc.wantOf {
				t.Errorf("labels %v, annotations %v; want shadow of %q", s.Labels, s.Annotations, tc.wantOf)
			}
			v := s.Spec.Versions[0]
			if len(s.Spec.Versions) != 1 || v.Name != tc.gvk.Version || !v.Served || !v.Storage || v.Subresources == nil || v.Subresources.Status == nil {
				t.Errorf("versions %+v", s.Spec.Versions)
			}
			for _, field := range []string{"spec", "status"} {
				p := v.Schema.OpenAPIV3Schema.Properties[field]
				if p.XPreserveUnknownFields == nil || !*p.XPreserveUnknownFields {
					t.Errorf("%s does not preserve unknown fields", field)
				}
			}
		})
	}
	t.Run("invalid plural", func(t *testing.T) {
		if err := Validate(GenericCRD(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, "Nodes")); err == nil {
			t.Error("Validate accepted an upper-case plural")
		}
	})
}
