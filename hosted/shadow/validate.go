package shadow

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate reports what the API server (apiextensions-apiserver v0.36) would reject, in a
// request to create crd, among the fields a shadow's rewrite sets or can make invalid:
// metadata (the name must be plural.group; labels and annotations), spec.group, spec.scope,
// spec.names, the versions (names, exactly one storage version, one served at least),
// spec.preserveUnknownFields, spec.conversion, and each version's schema, which must be
// present, of type object at its root and structural. The messages are the server's. crd is
// not modified. The error names the CRD and lists every problem found.
//
// The rest of the server's checks (CEL rules and their cost, defaults, printer columns,
// selectable fields) read what a shadow keeps of the original as it is, so they hold for the
// shadow of a CRD the server accepted; the server checks them again when the shadow is
// installed. Validate does not run them because they link CEL and the API server's webhook
// client, 16 MB of the topolayer binary and 18 MiB of every topolayer process's memory. The
// package's tests check every shadow with the server's whole validation.
func Validate(crd *apiextensionsv1.CustomResourceDefinition) error {
	if crd == nil {
		return errors.New("validate a nil CustomResourceDefinition")
	}
	spec := field.NewPath("spec")
	errs := apivalidation.ValidateObjectMeta(&crd.ObjectMeta, false, func(name string, prefix bool) []string {
		msgs := apivalidation.NameIsDNSSubdomain(name, prefix)
		if name != crd.Spec.Names.Plural+"."+crd.Spec.Group {
			msgs = append(msgs, `must be spec.names.plural+"."+spec.group`)
		}
		return msgs
	}, field.NewPath("metadata"))
	errs = append(errs, validateGroup(crd.Spec.Group, spec.Child("group"))...)
	if s := crd.Spec.Scope; s != apiextensionsv1.ClusterScoped && s != apiextensionsv1.NamespaceScoped {
		errs = append(errs, field.NotSupported(spec.Child("scope"), s, []apiextensionsv1.ResourceScope{apiextensionsv1.ClusterScoped, apiextensionsv1.NamespaceScoped}))
	}
	errs = append(errs, validateNames(crd.Spec.Names, spec.Child("names"))...)
	errs = append(errs, validateVersions(crd.Spec.Versions, spec.Child("versions"))...)
	if crd.Spec.PreserveUnknownFields {
		errs = append(errs, field.Invalid(spec.Child("preserveUnknownFields"), true, "must be false"))
	}
	errs = append(errs, validateConversion(crd.Spec.Conversion, spec.Child("conversion"))...)
	if len(errs) > 0 {
		return fmt.Errorf("crd %s: %w", crd.Name, errs.ToAggregate())
	}
	return nil
}

// validateGroup checks spec.group: a DNS subdomain with at least one dot.
func validateGroup(group string, path *field.Path) field.ErrorList {
	if group == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if msgs := validation.IsDNS1123Subdomain(group); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, group, strings.Join(msgs, ","))}
	}
	if !strings.Contains(group, ".") {
		return field.ErrorList{field.Invalid(path, group, "should be a domain with at least one dot")}
	}
	return nil
}

// validateNames checks spec.names as the server does: plural, singular, shortNames and
// categories are DNS-1035 labels, kind and listKind are too once lower-cased, and differ.
func validateNames(n apiextensionsv1.CustomResourceDefinitionNames, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(p *field.Path, value, lowered, prefix string) {
		if msgs := validation.IsDNS1035Label(lowered); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p, value, prefix+strings.Join(msgs, ",")))
		}
	}
	if n.Plural == "" {
		errs = append(errs, field.Required(path.Child("plural"), ""))
	} else {
		label(path.Child("plural"), n.Plural, n.Plural, "")
	}
	if n.Singular != "" {
		label(path.Child("singular"), n.Singular, n.Singular, "")
	}
	const mixed = "may have mixed case, but should otherwise match: "
	if n.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	} else {
		label(path.Child("kind"), n.Kind, strings.ToLower(n.Kind), mixed)
	}
	if n.ListKind == "" {
		errs = append(errs, field.Required(path.Child("listKind"), ""))
	} else {
		label(path.Child("listKind"), n.ListKind, strings.ToLower(n.ListKind), mixed)
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, field.Invalid(path.Child("listKind"), n.ListKind, "kind and listKind may not be the same"))
	}
	for i, s := range n.ShortNames {
		label(path.Child("shortNames").Index(i), s, s, "")
	}
	for i, c := range n.Categories {
		label(path.Child("categories").Index(i), c, c, "")
	}
	return errs
}

// validateVersions checks the versions: at least one, unique DNS-1035 names, exactly one
// storage version, one served at least, and each version's schema.
func validateVersions(versions []apiextensionsv1.CustomResourceDefinitionVersion, path *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Invalid(path, versions, "must have exactly one version marked as storage version")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	storage, served := 0, false
	for i, v := range versions {
		p := path.Index(i)
		if msgs := validation.IsDNS1035Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("name"), v.Name, strings.Join(msgs, ",")))
		}
		if names.Has(v.Name) {
			errs = append(errs, field.Invalid(path, versions, "must contain unique version names"))
		}
		names.Insert(v.Name)
		if v.Storage {
			storage++
		}
		served = served || v.Served
		errs = append(errs, validateSchema(v.Schema, p.Child("schema", "openAPIV3Schema"))...)
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(path, versions, "must have exactly one version marked as storage version"))
	}
	if !served {
		errs = append(errs, field.Invalid(path, versions, "must have at least one version marked as served"))
	}
	return errs
}

// validateSchema checks one version's schema: present, of type object at its root, and
// structural (converted to the internal version the server's structural checks take).
func validateSchema(v *apiextensionsv1.CustomResourceValidation, path *field.Path) field.ErrorList {
	if v == nil || v.OpenAPIV3Schema == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.OpenAPIV3Schema, &internal, nil); err != nil {
		return field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	var errs field.ErrorList
	if internal.Type != "object" {
		errs = append(errs, field.Invalid(path.Child("type"), internal.Type, "must be object at the root"))
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return append(errs, field.Invalid(path, "", err.Error()))
	}
	return append(errs, structuralschema.ValidateStructural(path, s)...)
}

// validateConversion checks spec.conversion: strategy None, or Webhook with its client
// configuration and review versions.
func validateConversion(c *apiextensionsv1.CustomResourceConversion, path *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	switch c.Strategy {
	case apiextensionsv1.NoneConverter:
		if c.Webhook != nil {
			return field.ErrorList{field.Forbidden(path.Child("webhook"), "should not be set when strategy is not set to Webhook")}
		}
		return nil
	case apiextensionsv1.WebhookConverter:
		if c.Webhook == nil || c.Webhook.ClientConfig == nil {
			return field.ErrorList{field.Required(path.Child("webhook", "clientConfig"), "required when strategy is set to Webhook")}
		}
		if len(c.Webhook.ConversionReviewVersions) == 0 {
			return field.ErrorList{field.Required(path.Child("webhook", "conversionReviewVersions"), "")}
		}
		return nil
	default:
		return field.ErrorList{field.NotSupported(path.Child("strategy"), c.Strategy, []apiextensionsv1.ConversionStrategyType{apiextensionsv1.NoneConverter, apiextensionsv1.WebhookConverter})}
	}
}
