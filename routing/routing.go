package routing

// Cluster names a target cluster in a plan.
const (
	// ClusterStandalone is the one cluster of the standalone topology.
	ClusterStandalone = "cluster"
	// ClusterManagement is the management cluster of the hosted topology (the HCP namespace).
	ClusterManagement = "management"
	// ClusterGuest is the guest cluster of the hosted topology.
	ClusterGuest = "guest"
)

// Disposition is what happens to a mutation.
type Disposition string

const (
	// Apply writes the mutation to its target.
	Apply Disposition = "apply"
	// Absorbed means the target already provides the object (a Namespace in the HCP), so
	// nothing is written; gather synthesizes it back for the operator.
	Absorbed Disposition = "absorbed"
	// Dropped means the mutation is deliberately not written anywhere.
	Dropped Disposition = "dropped"
	// Rejected means the mutation may not be written; a plan with a rejected entry writes
	// nothing at all.
	Rejected Disposition = "rejected"
)

// Decision is where a mutation goes and which rule said so.
type Decision struct {
	// Cluster is the target cluster; empty unless the disposition is Apply or Absorbed.
	Cluster string
	// Disposition is what happens to the mutation.
	Disposition Disposition
	// Rule names the rule that decided.
	Rule string
	// Reason explains a disposition other than Apply.
	Reason string
}

// Router places one mutation, given its class, its standalone identity and its labels.
type Router interface {
	Route(o Object) Decision
}

// RouterFunc lets a function be a Router.
type RouterFunc func(o Object) Decision

// Route implements Router.
func (f RouterFunc) Route(o Object) Decision { return f(o) }

var _ Router = RouterFunc(nil)

// StandaloneRule is the name of the standalone topology's one rule.
const StandaloneRule = "standalone"

// Standalone returns the identity placement: every class, every object, to the one cluster.
func Standalone() Router {
	return RouterFunc(func(Object) Decision {
		return Decision{Cluster: ClusterStandalone, Disposition: Apply, Rule: StandaloneRule}
	})
}
