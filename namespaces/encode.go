package namespaces

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The name encoding folds a namespaced standalone object (ns, name) into one name inside the
// hosted control plane's namespace. It has two forms:
//
//   - readable: ns + "--" + name. It is used when ns contains no "--" and does not end with
//     '-' (true of every DNS label, and of the empty namespace that stands for cluster-scoped
//     RBAC), and the result is a valid name for the kind. The first "--" of a readable name is
//     then always the separator, so the name splits back into exactly one (ns, name).
//   - hashed: sanitize(ns + "-" + name), truncated, then "-" and the first 16 hex digits of
//     SHA-256(ns + "/" + name). Namespaces never contain '/', so the hash input determines
//     (ns, name); sanitizing collapses runs of '-' and the truncation trims trailing '-', so a
//     hashed name never contains "--".
//
// A readable name always contains "--" and a hashed name never does, so the two forms cannot
// collide: the encoding is injective, up to collisions of 64 bits of SHA-256 within the hashed
// form (the standalone-identity annotations and the hosted side's conflict check are the
// safety net there). A hashed name cannot be inverted from the name alone.

// separator joins the namespace and the name in the readable form.
const separator = "--"

// hashLen is the number of hex digits of SHA-256 that end a hashed name.
const hashLen = 16

// The API server generates a name from a generateName by truncating the prefix to
// generatedNameMax-generatedSuffixLen characters, whatever the kind, and appending
// generatedSuffixLen random alphanumerics (k8s.io/apiserver/pkg/storage/names).
const (
	generatedNameMax   = 63
	generatedSuffixLen = 5
)

// ErrNeedsAnnotations is returned (wrapped) when a target identity cannot be mapped back to
// its standalone identity from its name alone: the name is in the hashed form, or the object
// is the absorbed Namespace. The standalone-identity annotations of the target object resolve
// it; check with errors.Is.
var ErrNeedsAnnotations = errors.New("cannot be inverted without the standalone identity annotations")

// errNotEncoded says a name contains "--" but is not what the encoding produces.
var errNotEncoded = errors.New("not a name topolayer encodes")

// nameRules is how the API server checks the names of one kind.
type nameRules struct {
	max      int
	validate func(string) []string
}

const (
	groupRBAC = "rbac.authorization.k8s.io"

	resourceRoles               = "roles"
	resourceRoleBindings        = "rolebindings"
	resourceClusterRoles        = "clusterroles"
	resourceClusterRoleBindings = "clusterrolebindings"
)

var (
	labelRules     = nameRules{max: validation.DNS1123LabelMaxLength, validate: validation.IsDNS1123Label}
	subdomainRules = nameRules{max: validation.DNS1123SubdomainMaxLength, validate: validation.IsDNS1123Subdomain}
	rbacRules      = nameRules{max: validation.DNS1123SubdomainMaxLength, validate: isRBACName}
)

// rulesFor is the table behind NameValidator.
func rulesFor(group, resource string) nameRules {
	switch group {
	case "":
		if resource == "services" || resource == "namespaces" {
			return labelRules
		}
	case groupRBAC:
		switch resource {
		case resourceRoles, resourceRoleBindings, resourceClusterRoles, resourceClusterRoleBindings:
			return rbacRules
		}
	case "certificates.k8s.io":
		if resource == "certificatesigningrequests" {
			return rbacRules // "system:node:..." CSRs: the API server checks path segments only
		}
	}
	return subdomainRules
}

// NameValidator returns the check the API server applies to the names of the kind
// (group, resource); it returns nil for a valid name and the problems otherwise:
//
//   - core services and namespaces: a DNS-1123 label of at most 63 characters;
//   - rbac.authorization.k8s.io roles, rolebindings, clusterroles and clusterrolebindings, and
//     certificates.k8s.io certificatesigningrequests: a non-empty path segment name (no '/'
//     or '%', not "." or "..") of at most 253 characters, so "system:openshift:foo" is valid;
//   - every other kind, shadow kinds included: a DNS-1123 subdomain of at most 253 characters.
func NameValidator(group, resource string) func(string) []string {
	return rulesFor(group, resource).validate
}

// isRBACName validates a name of an RBAC kind.
func isRBACName(name string) []string {
	if name == "" {
		return []string{"must not be empty"}
	}
	msgs := content.IsPathSegmentName(name)
	if len(name) > validation.DNS1123SubdomainMaxLength {
		msgs = append(msgs, validation.MaxLenError(validation.DNS1123SubdomainMaxLength))
	}
	return msgs
}

// limit is the longest encoded name (or generateName, when prefix is set) of the kind.
func (r nameRules) limit(prefix bool) int {
	if prefix {
		return min(r.max, generatedNameMax) - generatedSuffixLen
	}
	return r.max
}

// valid reports whether s is a valid name of the kind or, when prefix is set, a generateName
// from which the server makes valid names.
func (r nameRules) valid(s string, prefix bool) bool {
	if len(s) > r.limit(prefix) {
		return false
	}
	if prefix {
		return r.validPrefix(s)
	}
	return len(r.validate(s)) == 0
}

// validPrefix reports whether the API server accepts s as a generateName of the kind and
// makes valid names from it. The server checks s with a trailing '-' masked, then appends
// alphanumerics to the first 58 characters of s; whether a name is valid does not depend on
// which alphanumerics, so one letter stands for them.
func (r nameRules) validPrefix(s string) bool {
	m := s
	if n := len(m); n > 0 && m[n-1] == '-' {
		m = m[:n-1] + "a"
	}
	if len(r.validate(m)) > 0 {
		return false
	}
	return len(r.validate(s[:min(len(s), generatedNameMax-generatedSuffixLen)]+"a")) == 0
}

// encodeName returns the hosted name of the standalone object (ns, name) of a kind with rules
// r, or its hosted generateName when prefix is set. ns is a DNS label, or "" for cluster-scoped
// RBAC. The result is always valid for the kind.
func encodeName(r nameRules, ns, name string, prefix bool) string {
	if !strings.Contains(ns, separator) && !strings.HasSuffix(ns, "-") {
		if s := ns + separator + name; r.valid(s, prefix) {
			return s
		}
	}
	return hashedName(ns, name, r.limit(prefix))
}

// hashedName returns the hashed form of (ns, name), at most limit characters long.
func hashedName(ns, name string, limit int) string {
	sum := sha256.Sum256([]byte(ns + "/" + name))
	h := hex.EncodeToString(sum[:hashLen/2])
	p := sanitize(ns + "-" + name)
	if room := limit - hashLen - 1; len(p) > room {
		// p is ASCII, so any cut is a character boundary. A cut may end in '-': trim it so
		// that the '-' before the hash never doubles.
		p = strings.TrimRight(p[:max(room, 0)], "-")
	}
	if p == "" {
		return h
	}
	return p + "-" + h
}

// sanitize lower-cases s, replaces every byte outside [a-z0-9-] with '-', collapses runs of
// '-' and trims '-' at both ends.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	dash := true // drops leading '-'
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			c = '-'
		}
		if c == '-' {
			if dash {
				continue
			}
			dash = true
		} else {
			dash = false
		}
		b.WriteByte(c)
	}
	return strings.TrimSuffix(b.String(), "-")
}

// decodeName inverts encodeName for a name (or a generateName, when prefix is set) in the
// readable form. A name without "--" is in the hashed form: it wraps ErrNeedsAnnotations. A
// name with "--" that encodeName does not produce wraps errNotEncoded. A name the server
// generated from a readable generateName decodes as a name: its random suffix stays with the
// standalone name.
func decodeName(r nameRules, s string, prefix bool) (ns, name string, err error) {
	ns, name, ok := strings.Cut(s, separator)
	if !ok {
		return "", "", ErrNeedsAnnotations
	}
	if encodeName(r, ns, name, prefix) != s {
		return "", "", errNotEncoded
	}
	return ns, name, nil
}

// isHashedShape reports whether s has the shape of a hashed name: 16 hex digits, alone or
// after a '-'.
func isHashedShape(s string) bool {
	if len(s) < hashLen || (len(s) > hashLen && s[len(s)-hashLen-1] != '-') {
		return false
	}
	for i := len(s) - hashLen; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
