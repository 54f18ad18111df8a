package routing

import "github.com/topolayer/topolayer/contract"

// Names of the built-in rules.
const (
	RuleHostedConfiguration = "hosted/configuration"
	RuleHostedManagement    = "hosted/management"
	RuleHostedUserWorkload  = "hosted/user-workload"
	RuleAbsorbNamespaces    = "hosted/absorb-namespaces"
	RuleClusterRBAC         = "hosted/cluster-rbac"
)

// ClusterRBACPolicy says what happens to cluster-scoped RBAC (ClusterRoles and
// ClusterRoleBindings) in a management-side class: no hosted control plane may grant
// anything outside its namespace.
type ClusterRBACPolicy string

const (
	// ConvertClusterRBAC turns it into a Role or RoleBinding in the HCP namespace.
	ConvertClusterRBAC ClusterRBACPolicy = "Convert"
	// RejectClusterRBAC rejects it, and with it the whole plan.
	RejectClusterRBAC ClusterRBACPolicy = "Reject"
)

func ptr(s string) *string { return &s }

// HostedDefaults returns the built-in rules of the hosted topology: Configuration and
// Management to the management cluster, UserWorkload to the guest, Namespace objects of the
// management-side classes absorbed (the HCP namespace exists already), and cluster-scoped
// RBAC of the management-side classes converted or rejected by policy. Events follow their
// class like any other object: the operator declared their namespaces (eventingNamespaces)
// in the class it writes them for.
func HostedDefaults(rbac ClusterRBACPolicy) []Rule {
	core, rbacGroup := ptr(""), ptr("rbac.authorization.k8s.io")
	rules := []Rule{
		{Name: RuleHostedConfiguration, Match: Match{Class: contract.ClassConfiguration}, Cluster: ClusterManagement},
		{Name: RuleHostedManagement, Match: Match{Class: contract.ClassManagement}, Cluster: ClusterManagement},
		{Name: RuleHostedUserWorkload, Match: Match{Class: contract.ClassUserWorkload}, Cluster: ClusterGuest},
	}
	for _, class := range []contract.Class{contract.ClassConfiguration, contract.ClassManagement} {
		suffix := "/" + string(class)
		rules = append(rules, Rule{
			Name: RuleAbsorbNamespaces + suffix, Match: Match{Class: class, Group: core, Resource: "namespaces"},
			Cluster: ClusterManagement, Disposition: Absorbed,
			Reason: "the hosted control plane's namespace stands for every namespace of the management side",
		})
		for _, resource := range []string{"clusterroles", "clusterrolebindings"} {
			r := Rule{Name: RuleClusterRBAC + suffix + "/" + resource, Match: Match{Class: class, Group: rbacGroup, Resource: resource}, Cluster: ClusterManagement}
			if rbac == RejectClusterRBAC {
				r.Cluster, r.Disposition = "", Rejected
				r.Reason = "cluster-scoped RBAC on the management cluster would reach outside the hosted control plane's namespace"
			}
			rules = append(rules, r)
		}
	}
	return rules
}
