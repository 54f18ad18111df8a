package namespaces

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// ErrIdentityMismatch is returned (wrapped) by Hosted.ToSource when a target object's
// standalone-identity annotations name a source that does not map to that object: the object
// was renamed, copied or tampered with, or was not written by topolayer.
var ErrIdentityMismatch = errors.New("standalone identity annotations do not map to this object")

// Alias maps one standalone object onto an existing object of the same group and resource in
// the hosted control plane's namespace, under another name; for example the secret
// openshift-authentication/v4-0-config-system-serving-cert onto oauth-server-crt. Aliases
// apply in both directions, before every other rule.
type Alias struct {
	// Source is the standalone object. Group, Resource, Namespace and Name must be set and
	// are matched; Version is ignored and GenerateName must be empty. Only namespaced objects
	// can be aliased.
	Source contract.Identity `json:"source"`
	// Name is the existing object's name in the hosted control plane's namespace. It must be
	// valid for the kind (see NameValidator), and may neither contain "--" nor end in "-"
	// followed by 16 hex digits, so that no encoded name can ever equal it.
	Name string `json:"name"`
}

// Hosted is the HyperShift topology's Mapper. On the guest cluster every object keeps its
// identity. On the management cluster every object is placed in the hosted control plane's
// namespace H:
//
//  1. an aliased object becomes (H, Alias.Name), same group and resource;
//  2. a Namespace becomes H itself: it is absorbed (simulated, never created), so every
//     namespace maps to H and is inverted only through annotations;
//  3. a ClusterRole or ClusterRoleBinding becomes a Role or RoleBinding in H named "--<name>"
//     (the encoding of an empty namespace, which no namespaced object has);
//  4. any other cluster-scoped object becomes its namespaced shadow in H: group
//     ShadowGroup(group), same resource and name;
//  5. a namespaced object (ns, name) becomes (H, encode(ns, name)), same group and resource;
//     a generateName is encoded the same way.
//
// The package documentation describes the encoding. Call Validate once before use; the
// mapping methods assume a valid Hosted.
type Hosted struct {
	// Namespace is the hosted control plane's namespace on the management cluster, H.
	Namespace string `json:"namespace"`
	// Aliases map standalone objects onto existing objects in Namespace.
	Aliases []Alias `json:"aliases,omitempty"`
}

var _ Mapper = Hosted{}

// Validate checks the namespace and the aliases, and returns every problem with its field
// path (namespace, aliases[i].source.name, ...).
func (h Hosted) Validate() error {
	var errs field.ErrorList
	if h.Namespace == "" {
		errs = append(errs, field.Required(field.NewPath("namespace"), "the hosted control plane namespace"))
	} else {
		for _, msg := range validation.IsDNS1123Label(h.Namespace) {
			errs = append(errs, field.Invalid(field.NewPath("namespace"), h.Namespace, msg))
		}
	}
	type key struct{ group, resource, namespace, name string }
	sources := map[key]int{}
	targets := map[key]int{}
	for i, a := range h.Aliases {
		p := field.NewPath("aliases").Index(i)
		errs = append(errs, validateAlias(p, a)...)
		src := key{a.Source.Group, a.Source.Resource, a.Source.Namespace, a.Source.Name}
		if j, ok := sources[src]; ok {
			errs = append(errs, field.Duplicate(p.Child("source"), fmt.Sprintf("%s (also aliases[%d])", a.Source, j)))
		} else {
			sources[src] = i
		}
		tgt := key{a.Source.Group, a.Source.Resource, "", a.Name}
		if j, ok := targets[tgt]; ok {
			errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s (also aliases[%d])", a.Name, j)))
		} else {
			targets[tgt] = i
		}
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}

// validateAlias checks one alias on its own.
func validateAlias(p *field.Path, a Alias) field.ErrorList {
	var errs field.ErrorList
	src := p.Child("source")
	s := a.Source
	if s.Resource == "" {
		errs = append(errs, field.Required(src.Child("resource"), ""))
	}
	if s.Name == "" {
		errs = append(errs, field.Required(src.Child("name"), ""))
	}
	if s.GenerateName != "" {
		errs = append(errs, field.Forbidden(src.Child("generateName"), "aliases match names"))
	}
	if msg := checkGroup(s.Group); msg != "" {
		errs = append(errs, field.Invalid(src.Child("group"), s.Group, msg))
	}
	switch {
	case s.Namespace == "":
		errs = append(errs, field.Required(src.Child("namespace"), "only namespaced objects can be aliased"))
	case s.IsNamespace() || isClusterRBAC(s.Group, s.Resource):
		errs = append(errs, field.Invalid(src.Child("resource"), s.Resource, "a cluster-scoped kind cannot be aliased"))
	default:
		for _, msg := range validation.IsDNS1123Label(s.Namespace) {
			errs = append(errs, field.Invalid(src.Child("namespace"), s.Namespace, msg))
		}
	}
	name := p.Child("name")
	if a.Name == "" {
		return append(errs, field.Required(name, "the existing object's name"))
	}
	for _, msg := range NameValidator(s.Group, s.Resource)(a.Name) {
		errs = append(errs, field.Invalid(name, a.Name, msg))
	}
	if strings.Contains(a.Name, separator) {
		errs = append(errs, field.Invalid(name, a.Name, `must not contain "--", which encoded names use`))
	}
	if isHashedShape(a.Name) {
		errs = append(errs, field.Invalid(name, a.Name, `must not end in "-" and 16 hex digits, which hashed names use`))
	}
	return errs
}

// checkGroup returns what is wrong with a standalone group, or "".
func checkGroup(group string) string {
	if group == coreShadowGroup {
		return `the core group is spelled ""`
	}
	if _, ok := IsShadowGroup(group); ok {
		return "a shadow group is not a standalone group"
	}
	return ""
}

// isClusterRBAC reports whether (group, resource) is a ClusterRole or ClusterRoleBinding.
func isClusterRBAC(group, resource string) bool {
	return group == groupRBAC && (resource == resourceClusterRoles || resource == resourceClusterRoleBindings)
}

// ToTarget maps a standalone identity to its identity on cluster: routing.ClusterGuest keeps it,
// routing.ClusterManagement applies the rules of Hosted. The version is never changed.
func (h Hosted) ToTarget(cluster string, id contract.Identity) (contract.Identity, error) {
	switch cluster {
	case routing.ClusterGuest:
		return id, nil
	case routing.ClusterManagement:
		t, err := h.toManagement(id)
		if err != nil {
			return contract.Identity{}, fmt.Errorf("%s: %w", id, err)
		}
		return t, nil
	}
	return contract.Identity{}, fmt.Errorf("%s: unknown cluster %q (want %q or %q)", id, cluster, routing.ClusterManagement, routing.ClusterGuest)
}

// toManagement applies the management-side rules. Its errors do not name id.
func (h Hosted) toManagement(id contract.Identity) (contract.Identity, error) {
	if h.Namespace == "" {
		return contract.Identity{}, errors.New("the hosted control plane namespace is not set")
	}
	if id.Name == "" && id.GenerateName == "" {
		return contract.Identity{}, errors.New("name or generateName is required")
	}
	if msg := checkGroup(id.Group); msg != "" {
		return contract.Identity{}, fmt.Errorf("group %q: %s", id.Group, msg)
	}
	if a, ok := h.aliasOf(id); ok {
		t := id
		t.Namespace, t.Name = h.Namespace, a.Name
		if id.GenerateName != "" {
			t.GenerateName = encodeName(rulesFor(id.Group, id.Resource), id.Namespace, id.GenerateName, true)
		}
		return t, nil
	}
	switch {
	case id.IsNamespace():
		return contract.Identity{Group: id.Group, Version: id.Version, Resource: id.Resource, Name: h.Namespace}, nil

	case isClusterRBAC(id.Group, id.Resource):
		if id.Namespace != "" {
			return contract.Identity{}, fmt.Errorf("%s is cluster-scoped but has namespace %q", id.Resource, id.Namespace)
		}
		t := id
		t.Resource = resourceRoles
		if id.Resource == resourceClusterRoleBindings {
			t.Resource = resourceRoleBindings
		}
		t.Namespace = h.Namespace
		encodeNames(&t, id, "")
		return t, nil

	case id.Namespace == "":
		t := id
		t.Group, t.Namespace = ShadowGroup(id.Group), h.Namespace
		r := rulesFor(t.Group, t.Resource)
		if id.Name != "" {
			if msgs := r.validate(id.Name); len(msgs) > 0 {
				return contract.Identity{}, fmt.Errorf("name %q is not valid for the namespaced shadow kind: %s", id.Name, strings.Join(msgs, "; "))
			}
		}
		if id.GenerateName != "" && !r.validPrefix(id.GenerateName) {
			return contract.Identity{}, fmt.Errorf("generateName %q is not valid for the namespaced shadow kind", id.GenerateName)
		}
		return t, nil

	default:
		if msgs := validation.IsDNS1123Label(id.Namespace); len(msgs) > 0 {
			return contract.Identity{}, fmt.Errorf("namespace %q: %s", id.Namespace, strings.Join(msgs, "; "))
		}
		t := id
		t.Namespace = h.Namespace
		encodeNames(&t, id, id.Namespace)
		return t, nil
	}
}

// encodeNames sets t's Name and GenerateName to the encodings of src's, with src in ns and
// t's kind deciding the rules.
func encodeNames(t *contract.Identity, src contract.Identity, ns string) {
	r := rulesFor(t.Group, t.Resource)
	if src.Name != "" {
		t.Name = encodeName(r, ns, src.Name, false)
	}
	if src.GenerateName != "" {
		t.GenerateName = encodeName(r, ns, src.GenerateName, true)
	}
}

// aliasOf returns the alias of a standalone identity.
func (h Hosted) aliasOf(id contract.Identity) (Alias, bool) {
	if id.Name == "" || id.Namespace == "" {
		return Alias{}, false
	}
	for _, a := range h.Aliases {
		s := a.Source
		if s.Name == id.Name && s.Namespace == id.Namespace && s.Resource == id.Resource && s.Group == id.Group {
			return a, true
		}
	}
	return Alias{}, false
}

// aliasTo returns the alias whose existing object is the target identity.
func (h Hosted) aliasTo(t contract.Identity) (Alias, bool) {
	if t.Name == "" {
		return Alias{}, false
	}
	for _, a := range h.Aliases {
		if a.Name == t.Name && a.Source.Resource == t.Resource && a.Source.Group == t.Group {
			return a, true
		}
	}
	return Alias{}, false
}

// ToSource maps an identity found on cluster back to its standalone identity; annotations are
// the target object's (nil for none). routing.ClusterGuest keeps the identity.
//
// On routing.ClusterManagement, when annotations carry the standalone identity (see SourceAnnotations)
// they are the source of truth, and ToTarget of the result must give id back, or the error
// wraps ErrIdentityMismatch. For an object the server named from a generateName (the
// annotations record a generateName and no name), the standalone name is the standalone
// generateName followed by the server's random suffix. Without annotations the name is
// decoded: aliases, shadow groups and readable names invert; a hashed name or the absorbed
// Namespace wraps ErrNeedsAnnotations. The result's version is id's.
func (h Hosted) ToSource(cluster string, id contract.Identity, annotations map[string]string) (contract.Identity, error) {
	switch cluster {
	case routing.ClusterGuest:
		return id, nil
	case routing.ClusterManagement:
		src, err := h.fromManagement(id, annotations)
		if err != nil {
			return contract.Identity{}, fmt.Errorf("%s: %w", id, err)
		}
		return src, nil
	}
	return contract.Identity{}, fmt.Errorf("%s: unknown cluster %q (want %q or %q)", id, cluster, routing.ClusterManagement, routing.ClusterGuest)
}

// fromManagement inverts toManagement. Its errors do not name t.
func (h Hosted) fromManagement(t contract.Identity, annotations map[string]string) (contract.Identity, error) {
	if hasSourceAnnotations(annotations) {
		return h.fromAnnotations(t, annotations)
	}
	src, err := h.decode(t)
	if err != nil {
		return contract.Identity{}, err
	}
	// The decoding is only a guess until the forward mapping confirms it: this rejects a
	// decoded namespace that is not a DNS label, and the encoded name of an aliased object
	// (which maps to its alias instead).
	if back, err := h.toManagement(src); err != nil || back != t {
		return contract.Identity{}, fmt.Errorf("decodes to %s, which does not map back to it: %w", src, errNotEncoded)
	}
	return src, nil
}

// decode inverts the management-side rules from the target identity alone.
func (h Hosted) decode(t contract.Identity) (contract.Identity, error) {
	if t.IsNamespace() {
		if t.Name != h.Namespace {
			return contract.Identity{}, fmt.Errorf("not the hosted control plane namespace %q", h.Namespace)
		}
		return contract.Identity{}, fmt.Errorf("the hosted control plane namespace absorbs every standalone namespace: %w", ErrNeedsAnnotations)
	}
	if t.Namespace != h.Namespace {
		return contract.Identity{}, fmt.Errorf("not in the hosted control plane namespace %q", h.Namespace)
	}
	src := t
	if a, ok := h.aliasTo(t); ok {
		src.Namespace, src.Name = a.Source.Namespace, a.Source.Name
		if t.GenerateName != "" {
			_, gen, err := decodeField("generateName", rulesFor(t.Group, t.Resource), t.GenerateName, true)
			if err != nil {
				return contract.Identity{}, err
			}
			src.GenerateName = gen
		}
		return src, nil
	}
	if g, ok := IsShadowGroup(t.Group); ok {
		src.Group, src.Namespace = g, ""
		return src, nil
	}
	r := rulesFor(t.Group, t.Resource)
	ns := ""
	decoded := false
	if t.Name != "" {
		n, name, err := decodeField("name", r, t.Name, false)
		if err != nil {
			return contract.Identity{}, err
		}
		ns, src.Name, decoded = n, name, true
	}
	if t.GenerateName != "" {
		n, gen, err := decodeField("generateName", r, t.GenerateName, true)
		if err != nil {
			return contract.Identity{}, err
		}
		if decoded && n != ns {
			return contract.Identity{}, fmt.Errorf("name and generateName decode to namespaces %q and %q", ns, n)
		}
		ns, src.GenerateName = n, gen
	}
	src.Namespace = ns
	if ns == "" {
		switch {
		case t.Group == groupRBAC && t.Resource == resourceRoles:
			src.Resource = resourceClusterRoles
		case t.Group == groupRBAC && t.Resource == resourceRoleBindings:
			src.Resource = resourceClusterRoleBindings
		default:
			return contract.Identity{}, fmt.Errorf("name %q has an empty namespace part, which only cluster RBAC has: %w", t.Name+t.GenerateName, errNotEncoded)
		}
	}
	return src, nil
}

// decodeField decodes one name field and says which field failed.
func decodeField(field string, r nameRules, s string, prefix bool) (ns, name string, err error) {
	ns, name, err = decodeName(r, s, prefix)
	switch {
	case errors.Is(err, ErrNeedsAnnotations):
		return "", "", fmt.Errorf("%s %q is in the hashed form: %w", field, s, err)
	case err != nil:
		return "", "", fmt.Errorf("%s %q: %w", field, s, err)
	}
	return ns, name, nil
}

// fromAnnotations reads the source from the standalone-identity annotations and checks it
// against the target.
func (h Hosted) fromAnnotations(t contract.Identity, annotations map[string]string) (contract.Identity, error) {
	var missing []string
	for _, k := range []string{AnnotationStandaloneGroup, AnnotationStandaloneResource, AnnotationStandaloneNamespace, AnnotationStandaloneName} {
		if _, ok := annotations[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return contract.Identity{}, fmt.Errorf("standalone identity annotations are incomplete: %s missing", strings.Join(missing, ", "))
	}
	src := contract.Identity{
		Group:        annotations[AnnotationStandaloneGroup],
		Version:      t.Version,
		Resource:     annotations[AnnotationStandaloneResource],
		Namespace:    annotations[AnnotationStandaloneNamespace],
		Name:         annotations[AnnotationStandaloneName],
		GenerateName: annotations[AnnotationStandaloneGenerateName],
	}
	hashedPrefix := ""
	if src.Name == "" && t.Name != "" && src.GenerateName != "" {
		// The server named the object from the generateName request: carry its random suffix
		// over to the standalone name.
		req, err := h.toManagement(src)
		if err != nil {
			return contract.Identity{}, fmt.Errorf("standalone identity annotations name %s: %w", src, err)
		}
		suffix, ok := strings.CutPrefix(t.Name, req.GenerateName)
		if !ok || suffix == "" {
			return contract.Identity{}, fmt.Errorf("name %q was not generated from generateName %q: %w", t.Name, req.GenerateName, ErrIdentityMismatch)
		}
		src.Name = src.GenerateName + suffix
		if !strings.Contains(req.GenerateName, separator) {
			hashedPrefix = req.GenerateName
		}
	}
	if t.GenerateName == "" && t.Name != "" {
		// The caller did not ask about the generateName: neither does the result.
		src.GenerateName = ""
	}
	back, err := h.toManagement(src)
	if err != nil {
		return contract.Identity{}, fmt.Errorf("standalone identity annotations name %s: %w", src, err)
	}
	if back == t {
		return src, nil
	}
	if hashedPrefix != "" && back.Name != t.Name {
		// A hashed prefix plus the server's suffix is not the encoding of any standalone name.
		return contract.Identity{}, fmt.Errorf("name %q was generated from the hashed generateName %q: its standalone name %q would map to %q, so it has none", t.Name, hashedPrefix, src.Name, back.Name)
	}
	return contract.Identity{}, fmt.Errorf("annotations name %s, which maps to %s: %w", src, back, ErrIdentityMismatch)
}

// hasSourceAnnotations reports whether any standalone-identity annotation is present.
func hasSourceAnnotations(annotations map[string]string) bool {
	for _, k := range []string{AnnotationStandaloneGroup, AnnotationStandaloneResource, AnnotationStandaloneNamespace, AnnotationStandaloneName, AnnotationStandaloneGenerateName} {
		if _, ok := annotations[k]; ok {
			return true
		}
	}
	return false
}
