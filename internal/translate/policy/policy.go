package policy

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// Rule names of the escalation policy's checks.
const (
	// RulePrivilegedObject rejects writes to privileged objects (see IsPrivileged) that the
	// policy does not allow the operator.
	RulePrivilegedObject = "policy/privileged-object"
	// RuleRBACEscalation rejects Roles and ClusterRoles that grant beyond the operator's RBAC
	// ceiling, and bindings to roles that the ceiling cannot vouch for.
	RuleRBACEscalation = "policy/rbac-escalation"
)

// Policy bounds what one operator's outputs may grant or install. The engine rejects every
// mutation beyond it, and with it the whole plan. A nil *Policy checks nothing.
type Policy struct {
	// Privileged selects the privileged objects the operator may create, change or delete,
	// by name or not: the configuration, not the operator, decides. Like every output they
	// must also be declared (Engine.Declared or Engine.Supplement); without declarations (nil
	// Engine.Declared), only those the supplement declares may be written.
	Privileged []routing.Match `json:"privileged,omitempty"`
	// RBAC, when set, is the operator's RBAC ceiling: every Role and ClusterRole and every
	// binding is checked against it, and the roles it lists as bindable may be bound to broad
	// subjects. Set or not, the default containment applies (checkRBACContainment).
	RBAC *RBACCeiling `json:"rbac,omitempty"`
	// PodSecurity says how management-side pods reach Pod Security "restricted":
	// PodSecurityStrip (default, "") or PodSecurityReject. Either way, what fails the check on
	// the final object is refused (RulePodSecurity).
	PodSecurity PodSecurityMode `json:"podSecurity,omitempty"`
	// Management widens the management cluster's allow-list (Engine.Containment) for the
	// operator; nil widens nothing.
	Management *ManagementAllowance `json:"management,omitempty"`
}

// PodSecurityMode returns the policy's pod security mode; a nil policy strips.
func (p *Policy) PodSecurityMode() PodSecurityMode {
	if p == nil || p.PodSecurity == "" {
		return PodSecurityStrip
	}
	return p.PodSecurity
}

// RBACCeiling is what an operator may grant through its RBAC outputs: at most what it holds
// itself. Every rule of every Role and ClusterRole it writes must be covered by Rules (the
// coverage of Kubernetes' own escalation check: verbs, API groups, resources with their
// subresources, resource names and non-resource URLs); every RoleBinding and
// ClusterRoleBinding it writes must refer to a role written in the same plan, whose rules are
// checked, or to one of BindableRoles.
type RBACCeiling struct {
	// Rules are the operator's own rules, typically those of its service account. The ceiling
	// applies whatever the namespace of the Role it is compared with.
	Rules []rbacv1.PolicyRule `json:"rules"`
	// AllowWildcards lets granted rules hold '*' (in verbs, apiGroups, resources or
	// nonResourceURLs); they must still be covered by Rules. Default false: a wildcard grant
	// is rejected.
	AllowWildcards bool `json:"allowWildcards,omitempty"`
	// BindableRoles are existing roles, not written by the operator, that its bindings may
	// refer to. cluster-admin is bindable only when listed here.
	BindableRoles []RoleRef `json:"bindableRoles,omitempty"`
	// Classes are the classes of the outputs the ceiling bounds and widens the default
	// containment for; empty means every class. The RBAC of other classes is held to the
	// default containment alone.
	Classes []contract.Class `json:"classes,omitempty"`
}

// For returns the ceiling when it applies to outputs of class, else nil.
func (c *RBACCeiling) For(class contract.Class) *RBACCeiling {
	if c == nil || (len(c.Classes) > 0 && !slices.Contains(c.Classes, class)) {
		return nil
	}
	return c
}

// RoleRef names a Role (in a namespace) or a ClusterRole.
type RoleRef struct {
	// Kind is Role or ClusterRole.
	Kind string `json:"kind"`
	// Namespace is the Role's namespace; empty for a ClusterRole.
	Namespace string `json:"namespace,omitempty"`
	// Name is the role's name.
	Name string `json:"name"`
}

// String prints the reference as Kind namespace/name or Kind name.
func (r RoleRef) String() string {
	if r.Namespace != "" {
		return r.Kind + " " + r.Namespace + "/" + r.Name
	}
	return r.Kind + " " + r.Name
}

// Kinds of a binding's roleRef.
const (
	KindRole        = "Role"
	KindClusterRole = "ClusterRole"
)

// The API group of RBAC and its resources.
const (
	GroupRBAC                   = "rbac.authorization.k8s.io"
	ResourceRoles               = "roles"
	ResourceClusterRoles        = "clusterroles"
	ResourceRoleBindings        = "rolebindings"
	ResourceClusterRoleBindings = "clusterrolebindings"
)

// ClusterAdmin is the ClusterRole that grants everything.
const ClusterAdmin = "cluster-admin"

// IsPrivileged reports whether writing an object of the resource changes what the API
// server serves or admits: CustomResourceDefinitions, admission webhook configurations,
// admission policies and their bindings, and APIServices (aggregated APIs).
func IsPrivileged(gr schema.GroupResource) bool {
	switch gr.Group {
	case "apiextensions.k8s.io":
		return gr.Resource == "customresourcedefinitions"
	case "admissionregistration.k8s.io":
		switch gr.Resource {
		case "validatingwebhookconfigurations", "mutatingwebhookconfigurations",
			"validatingadmissionpolicies", "validatingadmissionpolicybindings",
			"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
			return true
		}
	case "apiregistration.k8s.io":
		return gr.Resource == "apiservices"
	}
	return false
}

// Allowance is how the policy widens the management cluster's allow-list for its operator;
// a nil policy, or one without Management, widens nothing.
func (p *Policy) Allowance() ManagementAllowance {
	if p != nil && p.Management != nil {
		return *p.Management
	}
	return ManagementAllowance{}
}
