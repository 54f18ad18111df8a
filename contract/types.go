package contract

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Class is the cluster type a mutation is written for. On a standalone cluster all three
// classes are the same cluster; on HyperShift, Configuration and Management live in the
// hosted control plane's namespace on the management cluster and UserWorkload in the guest.
type Class string

const (
	// ClassConfiguration is where configuration lives (config.openshift.io and friends).
	ClassConfiguration Class = "Configuration"
	// ClassManagement is the control-plane side: operands, operator CRs, ClusterOperators.
	ClassManagement Class = "Management"
	// ClassUserWorkload is where user workloads run.
	ClassUserWorkload Class = "UserWorkload"
	// ClassUnspecified holds mutations that matched no declared output resource. Its
	// presence makes an apply-configuration run fail.
	ClassUnspecified Class = "Unspecified"
)

// classes lists the classes in the order their folders are read and written.
var classes = []Class{ClassConfiguration, ClassManagement, ClassUserWorkload, ClassUnspecified}

// Classes returns the classes in the order their folders are read and written (a copy, the
// caller's to change).
func Classes() []Class { return slices.Clone(classes) }

// Valid reports whether c is one of the four class folder names.
func (c Class) Valid() bool { return slices.Contains(classes, c) }

// Action is the kind of write request a mutation records.
type Action string

const (
	// ActionCreate is a POST to the collection.
	ActionCreate Action = "Create"
	// ActionUpdate is a PUT of the object.
	ActionUpdate Action = "Update"
	// ActionUpdateStatus is a PUT of the status subresource.
	ActionUpdateStatus Action = "UpdateStatus"
	// ActionApply is a server-side apply PATCH of the object.
	ActionApply Action = "Apply"
	// ActionApplyStatus is a server-side apply PATCH of the status subresource.
	ActionApplyStatus Action = "ApplyStatus"
	// ActionPatch is a JSON, merge or strategic-merge PATCH of the object.
	ActionPatch Action = "Patch"
	// ActionPatchStatus is a JSON, merge or strategic-merge PATCH of the status subresource.
	ActionPatchStatus Action = "PatchStatus"
	// ActionDelete is a DELETE of the object; its body is a DeleteOptions.
	ActionDelete Action = "Delete"
)

// actions lists every action in the order their folders are read and written (sorted by name,
// as a directory walk sees them).
var actions = []Action{
	ActionApply, ActionApplyStatus, ActionCreate, ActionDelete,
	ActionPatch, ActionPatchStatus, ActionUpdate, ActionUpdateStatus,
}

// Valid reports whether a is one of the eight contract actions.
func (a Action) Valid() bool { return slices.Contains(actions, a) }

// CarriesObject reports whether the body of a is a whole object (or apply configuration)
// whose apiVersion, kind, name and namespace must agree with the metadata. Patch bodies are
// patches and Delete bodies are DeleteOptions.
func (a Action) CarriesObject() bool {
	switch a {
	case ActionPatch, ActionPatchStatus, ActionDelete:
		return false
	}
	return a.Valid()
}

// IsStatus reports whether a writes the status subresource.
func (a Action) IsStatus() bool {
	return a == ActionUpdateStatus || a == ActionApplyStatus || a == ActionPatchStatus
}

// Patch content types recorded in a mutation's metadata (patchType).
const (
	PatchTypeJSON           = "application/json-patch+json"
	PatchTypeMerge          = "application/merge-patch+json"
	PatchTypeStrategicMerge = "application/strategic-merge-patch+json"
	PatchTypeApply          = "application/apply-patch+yaml"
)

// Identity names one object (or one generateName request) as the contract does: group,
// version, plural resource, namespace (empty for cluster-scoped) and name. A create that
// asks the server to generate the name has Name "" and GenerateName set.
type Identity struct {
	Group        string `json:"group"`
	Version      string `json:"version"`
	Resource     string `json:"resource"`
	Namespace    string `json:"namespace"`
	Name         string `json:"name"`
	GenerateName string `json:"generateName"`
}

// GroupResource returns the identity's group and resource.
func (id Identity) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: id.Group, Resource: id.Resource}
}

// GroupVersionResource returns the identity's group, version and resource.
func (id Identity) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: id.Group, Version: id.Version, Resource: id.Resource}
}

// String formats the identity the way kubectl names objects: `resource.group ns/name`.
func (id Identity) String() string {
	gr := id.GroupResource().String()
	n := id.Name
	if n == "" {
		n = id.GenerateName + "*"
	}
	if id.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", gr, id.Namespace, n)
	}
	return fmt.Sprintf("%s %s", gr, n)
}

// Key names an object regardless of its version: two identities that differ only in Version
// have the same Key, and so do two with the same name and different GenerateName (an object
// read from a cluster keeps the generateName it was created with). It is comparable, for use
// as a map key.
type Key struct {
	Group, Resource, Namespace, Name string
	// GenerateName is set only for a create that asks the server for a name (Name "").
	GenerateName string
}

// Key returns the identity without its version.
func (id Identity) Key() Key {
	k := Key{Group: id.Group, Resource: id.Resource, Namespace: id.Namespace, Name: id.Name}
	if id.Name == "" {
		k.GenerateName = id.GenerateName
	}
	return k
}

// IsEvent reports whether the identity is an Event (core or events.k8s.io).
func (id Identity) IsEvent() bool {
	return id.Resource == "events" && (id.Group == "" || id.Group == "events.k8s.io")
}

// IsNamespace reports whether the identity is a core Namespace object.
func (id Identity) IsNamespace() bool {
	return id.Group == "" && id.Resource == "namespaces"
}

// ResourceType is the metadata file's resourceType mapping. Its keys are capitalised on disk.
type ResourceType struct {
	Group    string `json:"Group"`
	Resource string `json:"Resource"`
	Version  string `json:"Version"`
}

// NameKey is the spelling of the name key in metadata files: "name" (library-go since 2025)
// or the legacy "mame" (the library-go vendored by multi-operator-manager).
type NameKey string

const (
	// NameKeyName is the current spelling, and the default for writing.
	NameKeyName NameKey = "name"
	// NameKeyLegacy is the misspelled key that older fixtures use.
	NameKeyLegacy NameKey = "mame"
)

// Metadata is one mutation's metadata file: what request was made, by whom, to which object.
type Metadata struct {
	// Action is the request kind; it also names the folder the mutation lives in.
	Action Action
	// ControllerInstanceName is the controller that issued the request; "" for events.
	ControllerInstanceName string
	// FieldManager is set for Apply, ApplyStatus, Patch and PatchStatus.
	FieldManager string
	// GenerateName is set for creates that let the server pick the name.
	GenerateName string
	// Name is the object's name; "" for generateName creates.
	Name string
	// Namespace is "" for cluster-scoped objects (and for Namespace objects themselves).
	Namespace string
	// PatchType is the Content-Type of Patch and PatchStatus requests.
	PatchType string
	// ResourceType is the group, version and plural resource of the request URL.
	ResourceType ResourceType
	// NameKey records which spelling of the name key was read. It does not decide how the
	// file is written; WriteOptions.NameKey does.
	NameKey NameKey
}

// Identity returns the object identity this metadata describes.
func (m Metadata) Identity() Identity {
	return Identity{
		Group:        m.ResourceType.Group,
		Version:      m.ResourceType.Version,
		Resource:     m.ResourceType.Resource,
		Namespace:    m.Namespace,
		Name:         m.Name,
		GenerateName: m.GenerateName,
	}
}

// SetIdentity replaces the object identity of the metadata, leaving the rest as it is.
func (m *Metadata) SetIdentity(id Identity) {
	m.ResourceType = ResourceType{Group: id.Group, Version: id.Version, Resource: id.Resource}
	m.Namespace = id.Namespace
	m.Name = id.Name
	m.GenerateName = id.GenerateName
}

// Mutation is one recorded write request: its metadata, the body bytes and the options bytes,
// exactly as the operator wrote them. Bodies and options travel as bytes and are never
// re-serialized by this package.
type Mutation struct {
	// Class is the class folder the mutation was read from or will be written to.
	Class Class
	// Metadata describes the request.
	Metadata Metadata
	// Prefix is the file-name prefix as read ("a92b", or "002" in old fixtures). When empty,
	// the writer computes the contract's prefix from the body (see FilePrefix).
	Prefix string
	// Body is the body file's bytes; nil for a mutation whose Object a translation rewrote,
	// until a writer needs them (Bytes).
	Body []byte
	// Object is Body parsed, for the actions that carry an object (Create, Update, Apply and
	// their status forms): the reader parses each body once and checks it against the
	// metadata, and what follows reads this, not Body. nil for patches and deletes, and for
	// mutations built in memory that nobody parsed (ParseObjects fills it). Whoever changes
	// Body of a parsed mutation sets Object to nil (the engine then parses Body) or keeps the
	// two in step.
	Object *unstructured.Unstructured
	// Options is the options file's bytes; nil when the mutation has no options file.
	Options []byte
	// Path is the body file's path relative to the directory it was read from, for messages.
	// The writer ignores it: paths are rebuilt from the metadata.
	Path string

	// read is the metadata file as the reader read it: a writer writes the file again as it
	// was while Metadata is unchanged. nil for mutations built in memory.
	read *metadataRead
}

// metadataRead is a metadata file as read and the metadata it decoded into.
type metadataRead struct {
	file []byte
	as   Metadata
}

// Bytes returns the body file's bytes: Body, or, where a translation rewrote the object and
// left Body empty, Object written as the contract's writer writes bodies (through JSON into
// YAML, keys sorted).
func (m *Mutation) Bytes() ([]byte, error) {
	if m.Body != nil || m.Object == nil {
		return m.Body, nil
	}
	if plainJSON(m.Object.Object) {
		return plainYAML(m.Object.Object)
	}
	js, err := json.Marshal(m.Object.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: write the body: %w", m.Identity(), err)
	}
	return yaml.JSONToYAML(js)
}

// DropContent drops what a mutation holds besides its identity and metadata (body, object,
// options and the metadata file as read), for a streaming writer once it wrote them.
func (m *Mutation) DropContent() {
	m.Body, m.Object, m.Options, m.read = nil, nil, nil, nil
}

// ForgetMetadataFile drops the metadata file as the reader read it, for a caller that
// changes the identity the metadata names (a writer then encodes the metadata anew, as it
// would anyway) and holds m a while: a planner holding every mutation of a directory.
func (m *Mutation) ForgetMetadataFile() { m.read = nil }

// metadataBytes returns the metadata file of m with the name key spelled key: the file as it
// was read while the metadata is unchanged, else encoded anew.
func (m *Mutation) metadataBytes(key NameKey) ([]byte, error) {
	if r := m.read; r != nil && m.Metadata == r.as && cmp.Or(key, NameKeyName) == r.as.NameKey {
		return r.file, nil
	}
	return MarshalMetadata(m.Metadata, key)
}

// Identity returns the identity of the object the mutation writes.
func (m *Mutation) Identity() Identity { return m.Metadata.Identity() }

// ControllerStatus is the outcome of one controller in one apply-configuration run.
type ControllerStatus string

const (
	// ControllerUnknown means the controller reported nothing.
	ControllerUnknown ControllerStatus = "Unknown"
	// ControllerSucceeded means the controller ran without error.
	ControllerSucceeded ControllerStatus = "Succeeded"
	// ControllerSkipped means the controller was disabled for this run.
	ControllerSkipped ControllerStatus = "Skipped"
	// ControllerFailed means the controller returned errors.
	ControllerFailed ControllerStatus = "Failed"
	// ControllerPanicked means the controller panicked; PanicStack says where.
	ControllerPanicked ControllerStatus = "Panicked"
)

// ControllerResults is controller-results.yaml: one entry per known controller.
type ControllerResults struct {
	ControllerResults []ControllerResult `json:"controllerResults"`
}

// ControllerResult is one controller's outcome.
type ControllerResult struct {
	ControllerName string           `json:"controllerName"`
	Status         ControllerStatus `json:"status"`
	Errors         []ErrorDetails   `json:"errors,omitempty"`
	PanicStack     string           `json:"panicStack,omitempty"`
}

// ErrorDetails is one error message of a controller.
type ErrorDetails struct {
	Message string `json:"message"`
}
