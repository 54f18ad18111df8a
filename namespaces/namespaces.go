package namespaces

import "github.com/topolayer/topolayer/contract"

// Mapper maps standalone identities to the identities they have on a target cluster, and back.
// For every identity ToTarget accepts, ToSource inverts it when given the target object's
// annotations; without them it inverts what the names alone determine.
type Mapper interface {
	// ToTarget returns the identity of a standalone object on the given target cluster.
	ToTarget(cluster string, id contract.Identity) (contract.Identity, error)
	// ToSource inverts ToTarget. annotations are the target object's annotations (may be nil);
	// when they carry the standalone identity (see identity.go) they are the source of truth and the
	// name decoding is checked against them; without them, names in the hashed form cannot be inverted.
	ToSource(cluster string, id contract.Identity, annotations map[string]string) (contract.Identity, error)
}

// Identity is the standalone topology's mapper: every object keeps its identity.
type Identity struct{}

var _ Mapper = Identity{}

// ToTarget returns id unchanged.
func (Identity) ToTarget(_ string, id contract.Identity) (contract.Identity, error) { return id, nil }

// ToSource returns id unchanged; the annotations are not read.
func (Identity) ToSource(_ string, id contract.Identity, _ map[string]string) (contract.Identity, error) {
	return id, nil
}
