package shadow

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"

	"github.com/topolayer/topolayer/hosted/openshiftapi"
)

// serverValidate is the API server's whole validation of a request to create crd: crd
// defaulted as the server decodes it, its status replaced as the create strategy does, and
// checked with validation.ValidateCustomResourceDefinition (names, scope, versions,
// structural schemas, CEL rules and their cost, printer columns, subresources, conversion).
// Tests only: it links CEL and the webhook client, which the binary leaves out.
func serverValidate(crd *apiextensionsv1.CustomResourceDefinition) error {
	scheme := apiextensionsScheme()
	in := crd.DeepCopy()
	scheme.Default(in)
	var out apiextensions.CustomResourceDefinition
	if err := scheme.Convert(in, &out, nil); err != nil {
		return fmt.Errorf("crd %s: %w", crd.Name, err)
	}
	out.Status = apiextensions.CustomResourceDefinitionStatus{}
	for _, v := range out.Spec.Versions {
		if v.Storage {
			out.Status.StoredVersions = []string{v.Name}
			break
		}
	}
	if errs := validation.ValidateCustomResourceDefinition(context.Background(), &out); len(errs) > 0 {
		return fmt.Errorf("crd %s: %w", crd.Name, errs.ToAggregate())
	}
	return nil
}

// checkValid fails the test unless both Validate and the server's whole validation accept crd.
func checkValid(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if err := Validate(crd); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if err := serverValidate(crd); err != nil {
		t.Errorf("the API server's validation: %v", err)
	}
}

// TestValidateAgreesWithServer: on a shadow broken in each field Validate checks, Validate
// and the API server's whole validation both refuse it, Validate naming the field; a rule
// only the server checks (a CEL rule that does not compile) is the server's alone.
func TestValidateAgreesWithServer(t *testing.T) {
	shadowOf := func(mutate func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
		s, err := CRD(decodeCRDString(t, widgetCRD))
		if err != nil {
			t.Fatal(err)
		}
		mutate(s)
		return s
	}
	schema := func(s *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.JSONSchemaProps {
		return s.Spec.Versions[0].Schema.OpenAPIV3Schema
	}
	tests := map[string]struct {
		mutate     func(*apiextensionsv1.CustomResourceDefinition)
		wantField  string // in Validate's error; empty: Validate accepts
		serverOnly bool
	}{
		"valid":                 {mutate: func(*apiextensionsv1.CustomResourceDefinition) {}},
		"name not plural.group": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Name = "gadgets." + s.Spec.Group }, wantField: "metadata.name"},
		"label value too long":  {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Labels[LabelShadowOf] = strings.Repeat("a", 64) }, wantField: "metadata.labels"},
		"group too long": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) {
			s.Spec.Group = strings.Repeat("a", 250) + ".dev"
			s.Name = "widgets." + s.Spec.Group
		}, wantField: "spec.group"},
		"scope": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Spec.Scope = "Everywhere" }, wantField: "spec.scope"},
		"upper-case plural": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) {
			s.Spec.Names.Plural = "Widgets"
			s.Name = "Widgets." + s.Spec.Group
		}, wantField: "spec.names.plural"},
		"kind equals listKind": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Spec.Names.ListKind = s.Spec.Names.Kind }, wantField: "spec.names.listKind"},
		"short name":           {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Spec.Names.ShortNames = []string{"w_1"} }, wantField: "spec.names.shortNames[0]"},
		"no storage version":   {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Spec.Versions[0].Storage = false }, wantField: "spec.versions"},
		"version name":         {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Spec.Versions[0].Name = "V1" }, wantField: "spec.versions[0].name"},
		"no schema":            {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Spec.Versions[0].Schema = nil }, wantField: "spec.versions[0].schema.openAPIV3Schema"},
		"root not an object": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) {
			schema(s).Type = "string"
			schema(s).Properties = nil
			schema(s).XValidations = nil
		}, wantField: "spec.versions[0].schema.openAPIV3Schema.type"},
		"not structural": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) {
			p := schema(s).Properties["spec"]
			p.Type = ""
			schema(s).Properties["spec"] = p
		}, wantField: "spec.versions[0].schema.openAPIV3Schema.properties[spec].type"},
		"preserveUnknownFields": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Spec.PreserveUnknownFields = true }, wantField: "spec.preserveUnknownFields"},
		"conversion strategy":   {mutate: func(s *apiextensionsv1.CustomResourceDefinition) { s.Spec.Conversion.Strategy = "Magic" }, wantField: "spec.conversion.strategy"},
		"webhook without its config": {mutate: func(s *apiextensionsv1.CustomResourceDefinition) {
			s.Spec.Conversion.Strategy = apiextensionsv1.WebhookConverter
		}, wantField: "spec.conversion.webhook"},
		"CEL rule that does not compile": {
			mutate: func(s *apiextensionsv1.CustomResourceDefinition) {
				schema(s).XValidations[0].Rule = "self.metadata.name =="
			},
			serverOnly: true,
		},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			s := shadowOf(tc.mutate)
			err, serverErr := Validate(s), serverValidate(s)
			switch {
			case tc.wantField == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.wantField != "" && (err == nil || !strings.Contains(err.Error(), tc.wantField)):
				t.Errorf("Validate: %v, want an error naming %s", err, tc.wantField)
			}
			if wantServerErr := tc.wantField != "" || tc.serverOnly; (serverErr != nil) != wantServerErr {
				t.Errorf("the API server's validation: %v, want an error: %v", serverErr, wantServerErr)
			}
		})
	}
}

// TestValidatePayloadShadows: the shadow of every cluster-scoped CRD of the OpenShift
// payload passes Validate and the API server's whole validation.
func TestValidatePayloadShadows(t *testing.T) {
	files, err := openshiftapi.PayloadCRDFiles()
	if err != nil {
		t.Fatal(err)
	}
	shadows := 0
	for _, f := range files {
		crds, err := ReadCRDs(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, crd := range crds {
			if crd.Spec.Scope != apiextensionsv1.ClusterScoped {
				continue
			}
			s, err := CRD(crd)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			checkValid(t, s)
			shadows++
		}
	}
	if shadows == 0 {
		t.Fatal("no cluster-scoped CRD in the payload's manifests")
	}
	t.Logf("%d shadows valid", shadows)
}
