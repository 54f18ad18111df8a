package config

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// Policy bounds what the operators' outputs may grant or install. A plan with a mutation
// beyond it is rejected whole (rules policy/privileged-object, policy/rbac-escalation,
// policy/rbac-containment and policy/pod-security). The defaults contain, in both topologies:
// privileged objects (CustomResourceDefinitions, admission webhook configurations, admission
// policies and their bindings, APIServices) only where policy.operators[].privileged lists
// them, and only when the operator also declares them, so an operator without
// output-resources gets none; on the management cluster no cluster-scoped RBAC and no binding
// to users or groups; on either cluster no broad subject bound to cluster-admin, a wildcard
// role, escalate/bind/impersonate or a role the plan does not write; management pods brought
// to Pod Security "restricted" by stripping.
type Policy struct {
	// PodSecurity is strip (default) or reject: how the pods and pod templates placed on the
	// management cluster reach Pod Security "restricted". strip runs the hypershift profile's
	// stripping transforms; reject runs none and refuses what would need them. Either way what
	// still fails the check is refused (policy/pod-security).
	PodSecurity policy.PodSecurityMode `json:"podSecurity,omitempty"`
	// Operators bound each operator's outputs, by operator name. An operator without an
	// entry gets the defaults: no listed privileged objects, no RBAC ceiling (the default
	// containment only).
	Operators []OperatorPolicy `json:"operators,omitempty"`
}

// OperatorPolicy bounds the outputs of one operator.
type OperatorPolicy struct {
	// Name is the operator's name (operators[].name, or the --operator of plan and apply).
	Name string `json:"name"`
	// Privileged selects the privileged objects the operator may write, by group, resource
	// and name (exact, or a prefix ending in '*'), as routing rules match; generated names
	// included. Like every output, they must also be in the operator's output-resources (or
	// the configuration's supplements): without declarations, none is allowed. Default: none.
	Privileged []routing.Match `json:"privileged,omitempty"`
	// RBACCeiling, when set, is at most what the operator's Roles and ClusterRoles may grant,
	// and what its bindings may refer to: rules (required, the operator's own rules),
	// allowWildcards (default false: any '*' in a granted rule is rejected) and bindableRoles
	// (existing roles it may bind; cluster-admin only when listed), and classes (the classes
	// of outputs it bounds and widens the default containment for; default every class).
	// Default: unset, RBAC outputs are held to the default containment only.
	RBACCeiling *policy.RBACCeiling `json:"rbacCeiling,omitempty"`
	// Management widens the hosted management cluster's allow-list (what an operand may
	// place in the HCP namespace, docs/security.md) for this operator: kinds (matched as
	// routing rules match), labels the environment reserves ({key, value}) that its operand
	// may set, and maxReplicas (default 3). Default: unset, the allow-list as it is.
	Management *policy.ManagementAllowance `json:"management,omitempty"`
}

// defaultPolicy fills the policy's defaults and clones what it shares with the input. The
// defaults are the same in both topologies: an operator's own declarations never grant
// privileged objects, on its own cluster or a shared one.
func defaultPolicy(p Policy) Policy {
	if p.PodSecurity == "" {
		p.PodSecurity = policy.PodSecurityStrip
	}
	p.Operators = slices.Clone(p.Operators)
	return p
}

// PolicyFor returns the translation policy of one operator: the configured bounds, or the
// defaults when the policy names no such operator.
func (c *TopologyConfig) PolicyFor(operator string) *policy.Policy {
	p := &policy.Policy{PodSecurity: c.Policy.PodSecurity}
	for _, op := range c.Policy.Operators {
		if op.Name == operator {
			p.Privileged = slices.Clone(op.Privileged)
			p.RBAC = op.RBACCeiling
			p.Management = op.Management
			break
		}
	}
	return p
}

func validatePolicy(cfg *TopologyConfig) field.ErrorList {
	var errs field.ErrorList
	base := field.NewPath("policy")
	errs = append(errs, oneOf(base.Child("podSecurity"), cfg.Policy.PodSecurity, policy.PodSecurityStrip, policy.PodSecurityReject)...)
	names := map[string]int{}
	for i, op := range cfg.Policy.Operators {
		p := base.Child("operators").Index(i)
		errs = append(errs, dnsLabel(p.Child("name"), op.Name)...)
		if j, dup := names[op.Name]; dup && op.Name != "" {
			errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s (also policy.operators[%d])", op.Name, j)))
		}
		names[op.Name] = i
		for j, m := range op.Privileged {
			errs = append(errs, validatePrivilegedMatch(p.Child("privileged").Index(j), m)...)
		}
		if m := op.Management; m != nil {
			mp := p.Child("management")
			for j, k := range m.Kinds {
				if k.Resource == "" {
					errs = append(errs, field.Required(mp.Child("kinds").Index(j).Child("resource"), "a kind added to the allow-list names its resource"))
				}
			}
			for j, l := range m.Labels {
				if l.Key == "" {
					errs = append(errs, field.Required(mp.Child("labels").Index(j).Child("key"), ""))
				}
			}
			if m.MaxReplicas < 0 {
				errs = append(errs, field.Invalid(mp.Child("maxReplicas"), m.MaxReplicas, "must not be negative"))
			}
			if m.MaxScratch != nil && m.MaxScratch.Sign() <= 0 {
				errs = append(errs, field.Invalid(mp.Child("maxScratch"), m.MaxScratch.String(), "must be positive: a pod's scratch volumes on the management cluster are always bounded"))
			}
			if m.MaxClaim != nil && m.MaxClaim.Sign() <= 0 {
				errs = append(errs, field.Invalid(mp.Child("maxClaim"), m.MaxClaim.String(), "must be positive: a claim's storage on the management cluster is always bounded"))
			}
		}
		if c := op.RBACCeiling; c != nil {
			errs = append(errs, validateCeiling(p.Child("rbacCeiling"), c)...)
		}
	}
	return errs
}

// validatePrivilegedMatch checks that a match selects privileged objects only.
func validatePrivilegedMatch(p *field.Path, m routing.Match) field.ErrorList {
	var errs field.ErrorList
	if m.Group == nil {
		errs = append(errs, field.Required(p.Child("group"), "the API group of a privileged kind, e.g. apiextensions.k8s.io"))
	}
	if m.Resource == "" {
		errs = append(errs, field.Required(p.Child("resource"), "a privileged resource, e.g. customresourcedefinitions"))
	}
	if m.Group != nil && m.Resource != "" && !policy.IsPrivileged(schema.GroupResource{Group: *m.Group, Resource: m.Resource}) {
		errs = append(errs, field.Invalid(p.Child("resource"), m.Resource, fmt.Sprintf("%s is not privileged: only CustomResourceDefinitions, admission webhook configurations and policies, and APIServices need listing",
			schema.GroupResource{Group: *m.Group, Resource: m.Resource})))
	}
	if m.Class != "" && (!m.Class.Valid() || m.Class == contract.ClassUnspecified) {
		errs = append(errs, field.NotSupported(p.Child("class"), m.Class, contract.Classes()[:3]))
	}
	for _, f := range []struct{ name, v string }{{"namespace", m.Namespace}, {"name", m.Name}, {"generateName", m.GenerateName}} {
		if strings.Contains(strings.TrimSuffix(f.v, "*"), "*") {
			errs = append(errs, field.Invalid(p.Child(f.name), f.v, "'*' is allowed only at the end"))
		}
	}
	return errs
}

// validateCeiling checks an RBAC ceiling's rules and bindable roles.
func validateCeiling(p *field.Path, c *policy.RBACCeiling) field.ErrorList {
	var errs field.ErrorList
	if len(c.Rules) == 0 {
		errs = append(errs, field.Required(p.Child("rules"), "the operator's own rules; a ceiling without rules allows no grant"))
	}
	for i, r := range c.Rules {
		errs = append(errs, validatePolicyRule(p.Child("rules").Index(i), r)...)
	}
	for i, class := range c.Classes {
		if !class.Valid() || class == contract.ClassUnspecified {
			errs = append(errs, field.NotSupported(p.Child("classes").Index(i), class, contract.Classes()[:3]))
		}
	}
	seen := map[policy.RoleRef]int{}
	for i, ref := range c.BindableRoles {
		rp := p.Child("bindableRoles").Index(i)
		switch ref.Kind {
		case policy.KindClusterRole:
			if ref.Namespace != "" {
				errs = append(errs, field.Forbidden(rp.Child("namespace"), "a ClusterRole has no namespace"))
			}
		case policy.KindRole:
			errs = append(errs, dnsLabel(rp.Child("namespace"), ref.Namespace)...)
		default:
			errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, []string{policy.KindRole, policy.KindClusterRole}))
		}
		if ref.Name == "" {
			errs = append(errs, field.Required(rp.Child("name"), ""))
		}
		if j, dup := seen[ref]; dup {
			errs = append(errs, field.Duplicate(rp, fmt.Sprintf("%s (also bindableRoles[%d])", ref, j)))
		}
		seen[ref] = i
	}
	return errs
}

// validatePolicyRule checks a rule the way the API server checks the rules of a ClusterRole.
func validatePolicyRule(p *field.Path, r rbacv1.PolicyRule) field.ErrorList {
	var errs field.ErrorList
	if len(r.Verbs) == 0 {
		errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
	}
	if len(r.NonResourceURLs) > 0 {
		if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), `resource rules must supply at least one api group ("" is the core group)`))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}
