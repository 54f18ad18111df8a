package plans

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// Topology names in a plan.
const (
	TopologyStandalone = "standalone"
	TopologyHosted     = "hosted"
)

// Plan is an ordered list of target mutations, each with its source, the rule that placed it
// and what happens to it. Its JSON form is stable: later tools read it.
type Plan struct {
	// Topology is "standalone" or "hosted".
	Topology string `json:"topology"`
	// Entries keep the source directory's order (class, then action and path).
	Entries []Entry `json:"entries"`
	// Summary counts the entries per disposition.
	Summary Summary `json:"summary"`
	// GuestIdentities are the guest service accounts the plan's operands placed on the
	// management cluster act as (RuleGuestIdentity), each with the kubeconfig Secret their
	// pods mount; written at the I/O edge (package guestidentity), not as entries.
	GuestIdentities []GuestServiceAccount `json:"guestIdentities,omitempty"`
	// RBAC is the RBAC ceiling of the policy the plan was made under (Policy.RBAC): the
	// applier's check of the RBAC a cluster will hold lets the plan's bindings bind broad
	// subjects to the roles it lists as bindable. Not part of the JSON form: a plan read
	// back has none, and is held to the default containment.
	RBAC *policy.RBACCeiling `json:"-"`
}

// Target is where a mutation lands: a cluster and the identity it has there.
type Target struct {
	// Cluster is "cluster" (standalone), "management" or "guest" (hosted); "" when the
	// mutation goes nowhere.
	Cluster           string `json:"cluster"`
	contract.Identity `json:",inline"`
}

// Entry is one mutation of the source directory and what becomes of it.
type Entry struct {
	// Operator is the operator that wrote the mutation.
	Operator string `json:"operator"`
	// Class is the class folder the mutation was in.
	Class contract.Class `json:"class"`
	// Action is the request kind.
	Action contract.Action `json:"action"`
	// Source is the standalone identity the operator wrote.
	Source contract.Identity `json:"source"`
	// Target is where it lands.
	Target Target `json:"target"`
	// Disposition is apply, absorbed, dropped or rejected.
	Disposition routing.Disposition `json:"disposition"`
	// Rule names the rule (or check) that decided the disposition.
	Rule string `json:"rule"`
	// Transforms lists the transforms applied to the body, in order.
	Transforms []string `json:"transforms"`
	// Reason explains a disposition other than apply.
	Reason string `json:"reason"`
	// DeclaredBy is DeclaredBySupplement when the configuration's supplement, not the
	// operator's own output-resources, declares the mutation (and, for one it wrote under
	// Unspecified, gave it its Class); empty otherwise.
	DeclaredBy string `json:"declaredBy,omitempty"`
	// Warnings are problems that do not stop the mutation (dangling references, ...).
	Warnings []string `json:"warnings"`
	// Provenance says where a mutation the operator did not record comes from: a Delete
	// recovered from a controller's error (RuleRecoveredDelete). Empty for the mutations of
	// the output directory.
	Provenance string `json:"provenance,omitempty"`
	// Changes are the changes the engine made to the body, in the order it made them:
	// references, identity, recorded identity, then each transform's. Empty when the body
	// is written as the operator wrote it.
	Changes []Change `json:"changes,omitempty"`

	// SourcePath is the body file the mutation was read from.
	SourcePath string `json:"-"`
	// Mutation is the mutation as it will be written to the target; nil unless the
	// disposition is apply.
	Mutation *contract.Mutation `json:"-"`
	// Object is the final object, as Mutation.Body holds it, parsed: what policy checks and
	// what an applier writes without parsing the body again. nil unless the disposition is
	// apply and the action carries an object. It shares the values the engine left as they
	// were with the operator's object (the mutation's): copy it before changing it.
	Object *unstructured.Unstructured `json:"-"`
}

// DeclaredBySupplement is Entry.DeclaredBy for a mutation declared by the configuration's
// supplement to the operator's output-resources.
const DeclaredBySupplement = "supplement"

// Summary counts entries per disposition.
type Summary struct {
	Apply    int `json:"apply"`
	Absorbed int `json:"absorbed"`
	Dropped  int `json:"dropped"`
	Rejected int `json:"rejected"`
}

// Total is the number of entries the summary counts.
func (s Summary) Total() int { return s.Apply + s.Absorbed + s.Dropped + s.Rejected }

// Add counts one entry of disposition d.
func (s *Summary) Add(d routing.Disposition) {
	switch d {
	case routing.Apply:
		s.Apply++
	case routing.Absorbed:
		s.Absorbed++
	case routing.Dropped:
		s.Dropped++
	case routing.Rejected:
		s.Rejected++
	}
}

// Rejected returns the rejected entries. A plan with any is never applied.
func (p *Plan) Rejected() []Entry {
	var out []Entry
	for _, e := range p.Entries {
		if e.Disposition == routing.Rejected {
			out = append(out, e)
		}
	}
	return out
}

// ByCluster returns the mutations to apply, grouped by target cluster, in plan order.
func (p *Plan) ByCluster() map[string][]contract.Mutation {
	out := map[string][]contract.Mutation{}
	for _, e := range p.Entries {
		if e.Disposition == routing.Apply && e.Mutation != nil {
			out[e.Target.Cluster] = append(out[e.Target.Cluster], *e.Mutation)
		}
	}
	return out
}

// GuestServiceAccount is one identity operands of a plan act as on the guest: the standalone
// service account, which the plan places on the guest under its standalone identity, and the
// kubeconfig Secret in the HCP namespace that their pods mount. The Secret is not a plan
// entry: it carries a token the guest issues, so it is written at the I/O edge (package
// guestidentity).
type GuestServiceAccount struct {
	// Namespace and Name are the service account's, in standalone form and on the guest.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Secret names the kubeconfig Secret in the HCP namespace.
	Secret string `json:"secret"`
	// Workloads are the standalone identities of the pod-bearing objects acting as it.
	Workloads []contract.Identity `json:"workloads"`
}

// User is the service account's user name on the guest.
func (g GuestServiceAccount) User() string {
	return "system:serviceaccount:" + g.Namespace + ":" + g.Name
}
