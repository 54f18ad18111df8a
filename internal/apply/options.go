package apply

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"sigs.k8s.io/yaml"
)

// writeOptions is what topolayer reads of a mutation's options file (CreateOptions,
// UpdateOptions, PatchOptions or ApplyOptions as the operator wrote them).
type writeOptions struct {
	// FieldManager overrides the metadata's field manager.
	FieldManager string `json:"fieldManager"`
	// Force makes a server-side apply take over conflicting fields.
	Force bool `json:"force"`
}

// decodeOptions reads an options file; nil or empty bytes are the zero options. Unknown
// keys (dryRun, fieldValidation, ...) are ignored: topolayer decides those.
func decodeOptions(data []byte) (writeOptions, error) {
	var o writeOptions
	if len(data) == 0 {
		return o, nil
	}
	if err := yaml.Unmarshal(data, &o); err != nil {
		return writeOptions{}, fmt.Errorf("decode the options: %w", err)
	}
	return o, nil
}

// ServiceAccountUser returns the user name of a service account given as NAMESPACE/NAME,
// for Options.Impersonate: system:serviceaccount:NAMESPACE:NAME (serviceaccount.MakeUsername).
func ServiceAccountUser(namespacedName string) (string, error) {
	ns, name, ok := strings.Cut(namespacedName, "/")
	if !ok || ns == "" || name == "" || strings.ContainsAny(name, "/:") || strings.Contains(ns, ":") {
		return "", fmt.Errorf("service account %q: must be NAMESPACE/NAME", namespacedName)
	}
	return serviceaccount.MakeUsername(ns, name), nil
}

// Options configures a ClusterTarget. The zero value writes anywhere on the cluster as the
// rest.Config's own identity.
type Options struct {
	// Impersonate is a service-account user name, system:serviceaccount:<namespace>:<name>.
	// Every request of the target is then made as that account: the target's writes are
	// bounded by the account's RBAC. Default: the rest.Config's identity.
	Impersonate string
	// Namespace bounds the target to one namespace (the hosted control plane's namespace on
	// a management cluster): a mutation of a cluster-scoped object or of another namespace
	// is refused with ErrOutsideNamespace.
	Namespace string
	// FieldManager manages the fields of Create and Update writes, and of Apply writes whose
	// options and metadata name no field manager. Default: DefaultFieldManager.
	FieldManager string
	// Operator is the operator label value (namespaces.LabelOperator) of the objects this
	// target writes. An existing object labelled for another operator is a conflict. Default:
	// the label of each body.
	Operator string
	// HostedControlPlane is the ownerReference (see ResolveHostedControlPlane) that the
	// target adds to every object of its Namespace that it creates, updates or applies whole
	// (Create, Update, Apply): not to status writes, patches, deletions or Events. It is a
	// property of the management target of a hosted topology; it needs Namespace (an owner
	// must be in its object's namespace) and is ignored without it. Bodies of older plans
	// that still carry the annotation namespaces.AnnotationOwnerHCP lose it.
	HostedControlPlane *metav1.OwnerReference
	// RequireOwnership makes an existing object that carries no topolayer annotation or
	// label someone else's: a Create, Update, Apply, Patch or Delete of it is a conflict.
	// Status writes are allowed (the status of an object the environment created, such as a
	// shadow operator CR, is the operator's to write). Set it for hosted targets.
	RequireOwnership bool
	// Adopt, when not nil, takes over an existing object that carries no topolayer mark
	// (no operator label, no standalone identity annotations) instead of refusing it: the
	// write keeps the object (same uid), adds the marks, and first moves the field ownership
	// of Adopt.FieldManagers to the write's field manager. An object marked by another
	// operator or source stays a conflict. nil: such an object is a conflict on a target
	// with RequireOwnership, and written over without moving ownership otherwise.
	Adopt *Adoption
	// Admission, when not nil, judges what every Patch of the object makes of it: such a
	// patch is always asked of the server with a dry-run (dryRun=All) before anything of the
	// plan is written, and the object the server returns is judged (see Admission). It is a
	// property of the management target of a hosted topology, composed by the topology from
	// the engine's allow-list and policy.
	Admission Admission
	// Cache, when not nil, holds copies of some objects of the target's cluster (the
	// informers of the caller's watches). A write that the cached object proves a no-op is
	// skipped without any request: no read, no dry-run, no write. Anything else (an object
	// the cache does not hold, one the comparison does not prove unchanged, a conflict, an
	// adoption) is asked of the server as without a cache.
	Cache Cache
}

// Cache is what a ClusterTarget reads of its cluster without asking the server: an
// informer's store. A cached object may be stale; a write is skipped on it only when the
// object holds everything the write would set (AppliedNoOp, UpdatedNoOp, PatchedNoOp).
type Cache interface {
	// Cached returns a copy of the cached object of resource gvr named namespace/name
	// ("" for a cluster-scoped one); false when the cache does not hold it (the resource or
	// the namespace is not cached, or the object is absent).
	Cached(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool)
}

// Adoption is the policy of Options.Adopt.
type Adoption struct {
	// FieldManagers are the previous managers (a resident operator's field manager) whose
	// server-side-apply field ownership moves to the writing field manager on adoption.
	FieldManagers []string
}

// defaulted returns a copy of o with its defaults filled.
func (o Options) defaulted() Options {
	if o.FieldManager == "" {
		o.FieldManager = DefaultFieldManager
	}
	if o.HostedControlPlane != nil {
		ref := *o.HostedControlPlane
		o.HostedControlPlane = &ref
	}
	if o.Adopt != nil {
		a := Adoption{FieldManagers: slices.Clone(o.Adopt.FieldManagers)}
		o.Adopt = &a
	}
	return o
}

// ParseServiceAccount splits a service-account user name, system:serviceaccount:ns:name
// (serviceaccount.SplitUsername, with an error that says what is expected).
func ParseServiceAccount(user string) (namespace, name string, err error) {
	namespace, name, err = serviceaccount.SplitUsername(user)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a service account user name (system:serviceaccount:<namespace>:<name>): %w", user, err)
	}
	return namespace, name, nil
}
