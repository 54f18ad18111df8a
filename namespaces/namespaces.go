package namespaces

import "github.com/topolayer/topolayer/mom/contract"

// Mapper maps standalone identities to the identities they have on a target cluster, and back.
// Both directions must be exact inverses for every identity the mapper accepts.
type Mapper interface {
	// ToTarget returns the identity of a standalone object on the given target cluster.
	ToTarget(cluster string, id contract.Identity) (contract.Identity, error)
	// ToSource returns the standalone identity of an object found on the given target cluster.
	ToSource(cluster string, id contract.Identity) (contract.Identity, error)
}

// Identity is the standalone topology's mapper: every object keeps its identity.
type Identity struct{}

var _ Mapper = Identity{}

// ToTarget returns id unchanged.
func (Identity) ToTarget(_ string, id contract.Identity) (contract.Identity, error) { return id, nil }

// ToSource returns id unchanged.
func (Identity) ToSource(_ string, id contract.Identity) (contract.Identity, error) { return id, nil }
