package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Folder names inside a class/action directory.
const (
	clusterScopedDir = "cluster-scoped-resources"
	namespacesDir    = "namespaces"
	coreGroupDir     = "core"
	colonEscape      = "-COLON-"
	missingPrefix    = "MISSING"
)

// fileKind is the middle word of a mutation file name.
type fileKind string

const (
	kindBody     fileKind = "body"
	kindMetadata fileKind = "metadata"
	kindOptions  fileKind = "options"
)

// FilePrefix computes the contract's file-name prefix: the last two bytes of the SHA-256 of the
// body, in lower-case hex; the options bytes when the body is empty; "MISSING" when both are.
func FilePrefix(body, options []byte) string {
	data := body
	if len(data) == 0 {
		data = options
	}
	if len(data) == 0 {
		return missingPrefix
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[len(sum)-2:])
}

// GroupDir returns the directory name of an API group: "core" for the empty group.
func GroupDir(group string) string {
	if group == "" {
		return coreGroupDir
	}
	return group
}

// groupFromDir is the inverse of GroupDir.
func groupFromDir(dir string) string {
	if dir == coreGroupDir {
		return ""
	}
	return dir
}

// EscapeColons replaces every ':' with "-COLON-", as the contract does for go-module-safe
// file names.
func EscapeColons(s string) string { return strings.ReplaceAll(s, ":", colonEscape) }

// resourceDir is the directory of a mutation relative to its action folder:
// cluster-scoped-resources/<group>/<resource> or namespaces/<ns>/<group>/<resource>.
func resourceDir(id Identity) string {
	if id.Namespace == "" {
		return path.Join(clusterScopedDir, GroupDir(id.Group), id.Resource)
	}
	return path.Join(namespacesDir, id.Namespace, GroupDir(id.Group), id.Resource)
}

// MutationFiles returns the slash-separated paths of a mutation's body, metadata and options
// files relative to the top folder they are written under (a class folder, or a target
// cluster folder of a translated directory): `<Action>/<scope>/<group>/<resource>/<P>-<kind>-<N>.yaml`.
//
// The prefix of a mutation without one is computed from Body: give it the bytes of a
// rewritten object (Bytes) first.
func MutationFiles(m *Mutation) (body, metadata, options string) {
	prefix := m.Prefix
	if prefix == "" {
		prefix = FilePrefix(m.Body, m.Options)
	}
	dir := path.Join(string(m.Metadata.Action), resourceDir(m.Identity()))
	name := m.Metadata.Name + m.Metadata.GenerateName
	file := func(k fileKind) string {
		// The contract escapes colons in the whole relative path, not just the name.
		return EscapeColons(path.Join(dir, fmt.Sprintf("%s-%s-%s.yaml", prefix, k, name)))
	}
	return file(kindBody), file(kindMetadata), file(kindOptions)
}

// parsedFileName is a mutation file name split into its parts.
type parsedFileName struct {
	prefix string
	kind   fileKind
	name   string // still escaped (-COLON-)
}

// parseFileName splits `<P>-<kind>-<N>.yaml` (or .json). The prefix never contains '-', so the
// split is unambiguous even for object names containing "-body-".
func parseFileName(base string) (parsedFileName, error) {
	stem, ok := strings.CutSuffix(base, ".yaml")
	if !ok {
		stem, ok = strings.CutSuffix(base, ".json")
	}
	if !ok {
		return parsedFileName{}, errors.New("not a mutation file: the name must end in .yaml or .json")
	}
	prefix, rest, ok := strings.Cut(stem, "-")
	if !ok || prefix == "" {
		return parsedFileName{}, errors.New("not a mutation file: expected <prefix>-<body|metadata|options>-<name>.yaml")
	}
	kind, name, ok := strings.Cut(rest, "-")
	if !ok || name == "" {
		return parsedFileName{}, errors.New("not a mutation file: expected <prefix>-<body|metadata|options>-<name>.yaml")
	}
	switch fileKind(kind) {
	case kindBody, kindMetadata, kindOptions:
	default:
		return parsedFileName{}, fmt.Errorf("not a mutation file: %q is not body, metadata or options", kind)
	}
	return parsedFileName{prefix: prefix, kind: fileKind(kind), name: name}, nil
}
