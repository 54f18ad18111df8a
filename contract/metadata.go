package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	pathvalidation "k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// metadataFile is the on-disk form of Metadata. Name and Mame are pointers so that the writer
// emits exactly one of them, and the reader can tell which one was present.
type metadataFile struct {
	Action                 Action       `json:"action"`
	ControllerInstanceName string       `json:"controllerInstanceName"`
	FieldManager           string       `json:"fieldManager,omitempty"`
	GenerateName           string       `json:"generateName"`
	Mame                   *string      `json:"mame,omitempty"`
	Name                   *string      `json:"name,omitempty"`
	Namespace              string       `json:"namespace,omitempty"`
	PatchType              string       `json:"patchType,omitempty"`
	ResourceType           ResourceType `json:"resourceType"`
}

// ParseMetadata decodes and validates one metadata file. It accepts the name key spelled
// `name` or the legacy `mame` (preferring `name` when both are present) and rejects unknown
// keys, unknown actions and names that could not be a path segment.
func ParseMetadata(data []byte) (Metadata, error) {
	var f metadataFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return Metadata{}, fmt.Errorf("decode metadata: %w", err)
	}
	m := Metadata{
		Action:                 f.Action,
		ControllerInstanceName: f.ControllerInstanceName,
		FieldManager:           f.FieldManager,
		GenerateName:           f.GenerateName,
		Namespace:              f.Namespace,
		PatchType:              f.PatchType,
		ResourceType:           f.ResourceType,
	}
	switch {
	case f.Name != nil:
		m.Name, m.NameKey = *f.Name, NameKeyName
	case f.Mame != nil:
		m.Name, m.NameKey = *f.Mame, NameKeyLegacy
	default:
		return Metadata{}, fieldError("name", errors.New("required (spelled name or mame)"))
	}
	if err := m.Validate(); err != nil {
		return Metadata{}, err
	}
	return m, nil
}

// MarshalMetadata encodes metadata as the contract's writer does: through JSON into YAML, keys
// sorted, with the name key spelled as asked (NameKeyName when empty).
func MarshalMetadata(m Metadata, key NameKey) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	f := metadataFile{
		Action:                 m.Action,
		ControllerInstanceName: m.ControllerInstanceName,
		FieldManager:           m.FieldManager,
		GenerateName:           m.GenerateName,
		Namespace:              m.Namespace,
		PatchType:              m.PatchType,
		ResourceType:           m.ResourceType,
	}
	name := m.Name
	switch key {
	case NameKeyName, "":
		f.Name = &name
	case NameKeyLegacy:
		f.Mame = &name
	default:
		return nil, fmt.Errorf("unknown metadata name key %q (want name or mame)", key)
	}
	js, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(js)
}

// fieldErr is an error about one field of a file whose path the caller adds.
type fieldErr struct {
	field string
	err   error
}

func (e *fieldErr) Error() string { return e.field + ": " + e.err.Error() }
func (e *fieldErr) Unwrap() error { return e.err }

func fieldError(field string, err error) error { return &fieldErr{field: field, err: err} }

// Validate checks that the metadata names a known action and an identity that can be written
// as a path: every name part a valid path segment, the namespace a DNS label, and patchType
// present exactly for Patch and PatchStatus.
func (m Metadata) Validate() error {
	var errs []error
	if !m.Action.Valid() {
		errs = append(errs, fieldError("action", fmt.Errorf("%q is not one of %v", m.Action, actions)))
	}
	if err := ValidateIdentity(m.Identity()); err != nil {
		errs = append(errs, err)
	}
	switch m.Action {
	case ActionPatch, ActionPatchStatus:
		switch m.PatchType {
		case PatchTypeJSON, PatchTypeMerge, PatchTypeStrategicMerge:
		default:
			errs = append(errs, fieldError("patchType", fmt.Errorf("%q is not a JSON, merge or strategic-merge patch type", m.PatchType)))
		}
	default:
		if m.PatchType != "" {
			errs = append(errs, fieldError("patchType", fmt.Errorf("only Patch and PatchStatus carry a patch type, not %s", m.Action)))
		}
	}
	return errors.Join(errs...)
}

// ValidateIdentity checks that every part of an identity is safe to use as a path segment and
// plausible for Kubernetes: a lower-case resource, a version, a DNS-label namespace, and a name
// or a generateName that is a valid path segment of at most 253 characters.
func ValidateIdentity(id Identity) error {
	var errs []error
	segment := func(field, value string, required bool) {
		if value == "" {
			if required {
				errs = append(errs, fieldError(field, errors.New("required")))
			}
			return
		}
		if msgs := pathvalidation.IsValidPathSegmentName(value); len(msgs) > 0 {
			errs = append(errs, fieldError(field, fmt.Errorf("%q: %s", value, strings.Join(msgs, "; "))))
			return
		}
		if strings.ContainsAny(value, "\x00\\") || strings.TrimSpace(value) != value {
			errs = append(errs, fieldError(field, fmt.Errorf("%q: may not contain NUL, backslash or surrounding space", value)))
			return
		}
		if len(value) > validation.DNS1123SubdomainMaxLength {
			errs = append(errs, fieldError(field, fmt.Errorf("%d characters, more than %d", len(value), validation.DNS1123SubdomainMaxLength)))
		}
	}
	segment("resourceType.Group", id.Group, false)
	if id.Group == coreGroupDir {
		errs = append(errs, fieldError("resourceType.Group", errors.New(`"core" is spelled "" in metadata`)))
	}
	segment("resourceType.Version", id.Version, true)
	segment("resourceType.Resource", id.Resource, true)
	if id.Resource != "" && strings.ToLower(id.Resource) != id.Resource {
		errs = append(errs, fieldError("resourceType.Resource", fmt.Errorf("%q: resources are lower-case plurals", id.Resource)))
	}
	if id.Namespace != "" {
		if msgs := validation.IsDNS1123Label(id.Namespace); len(msgs) > 0 {
			errs = append(errs, fieldError("namespace", fmt.Errorf("%q: %s", id.Namespace, strings.Join(msgs, "; "))))
		}
	}
	if id.Name == "" && id.GenerateName == "" {
		errs = append(errs, fieldError("name", errors.New("name or generateName is required")))
	}
	segment("name", id.Name, false)
	segment("generateName", id.GenerateName, false)
	return errors.Join(errs...)
}

// ParseControllerResults decodes controller-results.yaml. A file holding `null` decodes to nil.
func ParseControllerResults(data []byte) (*ControllerResults, error) {
	var r *ControllerResults
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		return nil, fmt.Errorf("decode controller results: %w", err)
	}
	if r == nil {
		return nil, nil
	}
	for i, c := range r.ControllerResults {
		switch c.Status {
		case ControllerUnknown, ControllerSucceeded, ControllerSkipped, ControllerFailed, ControllerPanicked:
		default:
			return nil, fieldError(fmt.Sprintf("controllerResults[%d].status", i), fmt.Errorf("%q is not Unknown, Succeeded, Skipped, Failed or Panicked", c.Status))
		}
	}
	return r, nil
}

// MarshalControllerResults encodes controller results as the contract writes them; nil
// becomes `null`.
func MarshalControllerResults(r *ControllerResults) ([]byte, error) {
	return yaml.Marshal(r)
}
