package contract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/PaesslerAG/gval"
	"github.com/PaesslerAG/jsonpath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// ResourceTypeIdentifier names a resource type; group is always written ("" for core).
type ResourceTypeIdentifier struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// GroupVersionResource converts the identifier.
func (r ResourceTypeIdentifier) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// ExactResourceID names one object. For generated-name entries Name holds the generateName.
type ExactResourceID struct {
	ResourceTypeIdentifier `json:",inline"`
	Namespace              string `json:"namespace,omitempty"`
	Name                   string `json:"name"`
}

// LabelSelectedResource selects objects of a resource by label, in one namespace or all.
type LabelSelectedResource struct {
	ResourceTypeIdentifier `json:",inline"`
	Namespace              string               `json:"namespace,omitempty"`
	LabelSelector          metav1.LabelSelector `json:"labelSelector"`
}

// Reference types of input-resources. Only ImplicitNamespacedReference passes validation
// upstream; the others are defined by the schema.
const (
	ImplicitNamespacedReference = "ImplicitNamespacedReference"
	ExplicitNamespacedReference = "ExplicitNamespacedReference"
	ClusterScopedReference      = "ClusterScopedReference"
)

// ResourceReference reads objects named by a field of another object.
type ResourceReference struct {
	ReferringResource           ExactResourceID               `json:"referringResource"`
	Type                        string                        `json:"type"`
	ImplicitNamespacedReference *ImplicitNamespacedReferenceT `json:"implicitNamespacedReference,omitempty"`
	ExplicitNamespacedReference *ExplicitNamespacedReferenceT `json:"explicitNamespacedReference,omitempty"`
	ClusterScopedReference      *ClusterScopedReferenceT      `json:"clusterScopedReference,omitempty"`
}

// ImplicitNamespacedReferenceT names objects in a fixed namespace by a JSONPath into the
// referring object.
type ImplicitNamespacedReferenceT struct {
	ResourceTypeIdentifier `json:",inline"`
	Namespace              string `json:"namespace"`
	NameJSONPath           string `json:"nameJSONPath"`
}

// ExplicitNamespacedReferenceT names objects by JSONPaths for namespace and name.
type ExplicitNamespacedReferenceT struct {
	ResourceTypeIdentifier `json:",inline"`
	NamespaceJSONPath      string `json:"namespaceJSONPath"`
	NameJSONPath           string `json:"nameJSONPath"`
}

// ClusterScopedReferenceT names cluster-scoped objects by a JSONPath.
type ClusterScopedReferenceT struct {
	ResourceTypeIdentifier `json:",inline"`
	NameJSONPath           string `json:"nameJSONPath"`
}

// ResourceList is one list of input resources.
type ResourceList struct {
	ExactResources         []ExactResourceID       `json:"exactResources,omitempty"`
	GeneratedNameResources []ExactResourceID       `json:"generatedNameResources,omitempty"`
	LabelSelectedResources []LabelSelectedResource `json:"labelSelectedResources,omitempty"`
	ResourceReferences     []ResourceReference     `json:"resourceReferences,omitempty"`
}

// OperandResourceList lists an operator's operands per class, for health checks.
type OperandResourceList struct {
	ConfigurationResources ResourceList `json:"configurationResources"`
	ManagementResources    ResourceList `json:"managementResources"`
	UserWorkloadResources  ResourceList `json:"userWorkloadResources"`
}

// InputResources is what `operator input-resources` prints: what apply-configuration reads.
type InputResources struct {
	ApplyConfigurationResources ResourceList        `json:"applyConfigurationResources"`
	OperandResources            OperandResourceList `json:"operandResources"`
}

// OutputResourceList is what an operator may write to one class.
type OutputResourceList struct {
	// EventingNamespaces are the namespaces whose events the operator writes to this class.
	EventingNamespaces []string `json:"eventingNamespaces,omitempty"`
	// ExactResources are objects the operator writes by name.
	ExactResources []ExactResourceID `json:"exactResources,omitempty"`
	// GeneratedNameResources are creates with generateName; Name holds the generateName.
	GeneratedNameResources []ExactResourceID `json:"generatedNameResources,omitempty"`
}

// OutputResources is what `operator output-resources` prints: what it may write, per class.
type OutputResources struct {
	ConfigurationResources OutputResourceList `json:"configurationResources"`
	ManagementResources    OutputResourceList `json:"managementResources"`
	UserWorkloadResources  OutputResourceList `json:"userWorkloadResources"`
}

// ForClass returns the declarations of one class; nil for Unspecified.
func (o *OutputResources) ForClass(c Class) *OutputResourceList {
	switch c {
	case ClassConfiguration:
		return &o.ConfigurationResources
	case ClassManagement:
		return &o.ManagementResources
	case ClassUserWorkload:
		return &o.UserWorkloadResources
	}
	return nil
}

// Matches reports whether a write to id matches the list as the contract routes requests
// (spec §2.2): events by namespace; named objects by group, resource, namespace and name
// (version ignored); generateName-only creates by exact generateName. One extension: an
// exactResources name holding '*' is a pattern matching a family of names (MatchName),
// e.g. v4-0-config-user-idp-*-file-data.
func (l *OutputResourceList) Matches(id Identity) bool {
	if l == nil {
		return false
	}
	if id.IsEvent() && slices.Contains(l.EventingNamespaces, id.Namespace) {
		return true
	}
	same := func(e ExactResourceID) bool {
		return e.Group == id.Group && e.Resource == id.Resource && e.Namespace == id.Namespace
	}
	if id.GenerateName == "" {
		for _, e := range l.ExactResources {
			if same(e) && MatchName(e.Name, id.Name) {
				return true
			}
		}
	}
	if id.Name == "" {
		for _, e := range l.GeneratedNameResources {
			if same(e) && e.Name == id.GenerateName {
				return true
			}
		}
	}
	return false
}

// ClassesOf returns every class whose declarations match id, in class order. A mutation is
// written under each of them; none means Unspecified. A nil document declares nothing.
func (o *OutputResources) ClassesOf(id Identity) []Class {
	if o == nil {
		return nil
	}
	var out []Class
	for _, c := range classes[:3] {
		if o.ForClass(c).Matches(id) {
			out = append(out, c)
		}
	}
	return out
}

// ParseOutputResources decodes and validates an output-resources document.
func ParseOutputResources(data []byte) (*OutputResources, error) {
	return parseDeclarations[OutputResources]("output-resources", data)
}

// parseDeclarations decodes a declarations document strictly and validates it.
func parseDeclarations[T any, P interface {
	*T
	Validate() error
}](what string, data []byte) (*T, error) {
	var doc T
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	if err := P(&doc).Validate(); err != nil {
		return nil, err
	}
	return &doc, nil
}

// Validate checks an output-resources document: identifiers with a version and a resource,
// names where they are needed, no empty eventing namespace, and '*' only in the names of
// exactResources entries, as valid name patterns (ValidateNamePattern). Errors name the field.
func (o *OutputResources) Validate() error {
	var errs []error
	for _, c := range classes[:3] {
		l := o.ForClass(c)
		base := classKey(c)
		errs = append(errs, validateExact(base+".exactResources", l.ExactResources, true)...)
		errs = append(errs, validateExact(base+".generatedNameResources", l.GeneratedNameResources, false)...)
		for i, ns := range l.EventingNamespaces {
			f := fmt.Sprintf("%s.eventingNamespaces[%d]", base, i)
			if ns == "" {
				errs = append(errs, fieldError(f, errors.New("empty namespace")))
			}
			if err := validateNoWildcard(f, ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// classKey is the document key of a class's list.
func classKey(c Class) string {
	switch c {
	case ClassConfiguration:
		return "configurationResources"
	case ClassManagement:
		return "managementResources"
	default:
		return "userWorkloadResources"
	}
}

// ParseInputResources decodes and validates an input-resources document with the upstream
// rules: version and resource everywhere, names for exact and referring resources, matchLabels
// only, a namespace and a JSONPath that parses for implicit references. Explicit and
// cluster-scoped references are accepted too (upstream rejects them) when their JSONPaths parse.
func ParseInputResources(data []byte) (*InputResources, error) {
	return parseDeclarations[InputResources]("input-resources", data)
}

// Validate checks an input-resources document with the rules ParseInputResources states.
// Errors name the field.
func (in *InputResources) Validate() error {
	var errs []error
	validateList := func(base string, l ResourceList) {
		errs = append(errs, validateExact(base+".exactResources", l.ExactResources, true)...)
		for i, e := range l.ExactResources {
			if IsNamePattern(e.Name) && e.Namespace == "" {
				errs = append(errs, fieldError(fmt.Sprintf("%s.exactResources[%d].name", base, i),
					fmt.Errorf("name pattern %q: an input pattern needs a namespace (the namespace is listed for the names it matches)", e.Name)))
			}
		}
		errs = append(errs, validateExact(base+".generatedNameResources", l.GeneratedNameResources, false)...)
		for i, s := range l.LabelSelectedResources {
			f := fmt.Sprintf("%s.labelSelectedResources[%d]", base, i)
			errs = append(errs, validateType(f, s.ResourceTypeIdentifier)...)
			if len(s.LabelSelector.MatchExpressions) > 0 {
				errs = append(errs, fieldError(f+".labelSelector.matchExpressions", errors.New("not supported; use matchLabels")))
			}
			if _, err := metav1.LabelSelectorAsSelector(&s.LabelSelector); err != nil {
				errs = append(errs, fieldError(f+".labelSelector", err))
			}
		}
		for i, r := range l.ResourceReferences {
			errs = append(errs, validateReference(fmt.Sprintf("%s.resourceReferences[%d]", base, i), r)...)
		}
	}
	validateList("applyConfigurationResources", in.ApplyConfigurationResources)
	validateList("operandResources.configurationResources", in.OperandResources.ConfigurationResources)
	validateList("operandResources.managementResources", in.OperandResources.ManagementResources)
	validateList("operandResources.userWorkloadResources", in.OperandResources.UserWorkloadResources)
	return errors.Join(errs...)
}

func validateType(field string, t ResourceTypeIdentifier) []error {
	var errs []error
	if t.Version == "" {
		errs = append(errs, fieldError(field+".version", errors.New("required")))
	}
	if t.Resource == "" {
		errs = append(errs, fieldError(field+".resource", errors.New("required")))
	}
	return errs
}

// validateExact checks identifiers: a version, a resource and a name each, and a '*' only
// in a name, as a valid name pattern, where patterns are accepted (exactResources of outputs,
// and of inputs in a namespace).
func validateExact(field string, ids []ExactResourceID, patterns bool) []error {
	var errs []error
	for i, id := range ids {
		f := fmt.Sprintf("%s[%d]", field, i)
		errs = append(errs, validateType(f, id.ResourceTypeIdentifier)...)
		if id.Name == "" {
			errs = append(errs, fieldError(f+".name", errors.New("required")))
		}
		for _, v := range []struct{ field, value string }{{"group", id.Group}, {"version", id.Version}, {"resource", id.Resource}, {"namespace", id.Namespace}} {
			if err := validateNoWildcard(f+"."+v.field, v.value); err != nil {
				errs = append(errs, err)
			}
		}
		switch {
		case !IsNamePattern(id.Name):
		case !patterns:
			errs = append(errs, fieldError(f+".name", fmt.Errorf("name pattern %q: only exactResources take name patterns", id.Name)))
		default:
			if err := ValidateNamePattern(id.Name); err != nil {
				errs = append(errs, fieldError(f+".name", err))
			}
		}
	}
	return errs
}

func validateReference(field string, r ResourceReference) []error {
	errs := validateExact(field+".referringResource", []ExactResourceID{r.ReferringResource}, false)
	checkPath := func(f, p string) {
		if p == "" {
			errs = append(errs, fieldError(f, errors.New("required")))
			return
		}
		if _, err := ParseJSONPath(p); err != nil {
			errs = append(errs, fieldError(f, err))
		}
	}
	switch r.Type {
	case ImplicitNamespacedReference:
		ref := r.ImplicitNamespacedReference
		if ref == nil {
			return append(errs, fieldError(field+".implicitNamespacedReference", errors.New("required for type "+r.Type)))
		}
		errs = append(errs, validateType(field+".implicitNamespacedReference", ref.ResourceTypeIdentifier)...)
		if ref.Namespace == "" {
			errs = append(errs, fieldError(field+".implicitNamespacedReference.namespace", errors.New("required")))
		}
		checkPath(field+".implicitNamespacedReference.nameJSONPath", ref.NameJSONPath)
	case ExplicitNamespacedReference:
		ref := r.ExplicitNamespacedReference
		if ref == nil {
			return append(errs, fieldError(field+".explicitNamespacedReference", errors.New("required for type "+r.Type)))
		}
		errs = append(errs, validateType(field+".explicitNamespacedReference", ref.ResourceTypeIdentifier)...)
		checkPath(field+".explicitNamespacedReference.namespaceJSONPath", ref.NamespaceJSONPath)
		checkPath(field+".explicitNamespacedReference.nameJSONPath", ref.NameJSONPath)
	case ClusterScopedReference:
		ref := r.ClusterScopedReference
		if ref == nil {
			return append(errs, fieldError(field+".clusterScopedReference", errors.New("required for type "+r.Type)))
		}
		errs = append(errs, validateType(field+".clusterScopedReference", ref.ResourceTypeIdentifier)...)
		checkPath(field+".clusterScopedReference.nameJSONPath", ref.NameJSONPath)
	default:
		errs = append(errs, fieldError(field+".type", fmt.Errorf("%q is not %s, %s or %s", r.Type, ImplicitNamespacedReference, ExplicitNamespacedReference, ClusterScopedReference)))
	}
	return errs
}

// jsonPathLanguage is the JSONPath dialect of the contract ($, dotted fields, [*], filters
// with && and ||): PaesslerAG's jsonpath on gval, as the upstream library uses.
var jsonPathLanguage = gval.Full(jsonpath.PlaceholderExtension())

// ParseJSONPath parses a reference's JSONPath in the contract's dialect.
func ParseJSONPath(p string) (gval.Evaluable, error) {
	ev, err := jsonPathLanguage.NewEvaluable(p)
	if err != nil {
		return nil, fmt.Errorf("JSONPath %q: %w", p, err)
	}
	return ev, nil
}

// EvaluateNames evaluates a reference's JSONPath against an object and returns the names it
// yields: one string, or every string of a list. Missing fields yield nothing.
func EvaluateNames(p string, obj map[string]any) ([]string, error) {
	ev, err := ParseJSONPath(p)
	if err != nil {
		return nil, err
	}
	v, err := ev(context.Background(), obj)
	if err != nil {
		if strings.Contains(err.Error(), "unknown key") || strings.Contains(err.Error(), "out of bounds") {
			return nil, nil
		}
		return nil, fmt.Errorf("JSONPath %q: %w", p, err)
	}
	var names []string
	switch t := v.(type) {
	case string:
		names = append(names, t)
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				names = append(names, s)
			}
		}
	}
	return names, nil
}

// MarshalOutputResources prints output-resources the way operators do: the three class keys
// always, `{}` when empty.
func MarshalOutputResources(o *OutputResources) ([]byte, error) { return yaml.Marshal(o) }

// MarshalInputResources prints input-resources the way operators do.
func MarshalInputResources(in *InputResources) ([]byte, error) { return yaml.Marshal(in) }
