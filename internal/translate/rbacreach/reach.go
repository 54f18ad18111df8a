package rbacreach

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// Principal is a broad class of identities: the user name and the groups that every identity
// of the class has. An empty User stands for any name.
type Principal struct {
	// Name names the class as a binding subject does ("Group system:authenticated",
	// "ServiceAccount ns/default").
	Name string
	// User is the user name of every identity of the class, or "".
	User string
	// Groups are the groups every identity of the class is in.
	Groups []string
}

// PrincipalOf returns the broad class a binding subject stands for, and false when it stands
// for no broad class. namespace is the binding's (a ServiceAccount subject without one is in
// it). The broad classes are: every authenticated identity (Group system:authenticated),
// every unauthenticated request (Group system:unauthenticated, User system:anonymous), every
// service account (Group system:serviceaccounts), every service account of a namespace
// (Group system:serviceaccounts:<ns>), and a namespace's default service account, which every
// pod that names no account runs as.
func PrincipalOf(s rbacv1.Subject, namespace string) (Principal, bool) {
	switch {
	case s.Kind == rbacv1.GroupKind && s.Name == user.AllAuthenticated:
		return Principal{Name: "Group " + user.AllAuthenticated, Groups: []string{user.AllAuthenticated}}, true
	case s.Kind == rbacv1.GroupKind && s.Name == user.AllUnauthenticated,
		s.Kind == rbacv1.UserKind && s.Name == user.Anonymous:
		return Principal{Name: "Group " + user.AllUnauthenticated, User: user.Anonymous, Groups: []string{user.AllUnauthenticated}}, true
	case s.Kind == rbacv1.GroupKind && s.Name == serviceaccount.AllServiceAccountsGroup:
		return Principal{Name: "Group " + s.Name, Groups: []string{serviceaccount.AllServiceAccountsGroup, user.AllAuthenticated}}, true
	case s.Kind == rbacv1.GroupKind && strings.HasPrefix(s.Name, serviceaccount.ServiceAccountGroupPrefix):
		ns := strings.TrimPrefix(s.Name, serviceaccount.ServiceAccountGroupPrefix)
		return Principal{Name: "Group " + s.Name, Groups: append(serviceaccount.MakeGroupNames(ns), user.AllAuthenticated)}, true
	case s.Kind == rbacv1.ServiceAccountKind && s.Name == "default":
		ns := cmp.Or(s.Namespace, namespace)
		if ns == "" {
			return Principal{}, false
		}
		return defaultAccount(ns), true
	case s.Kind == rbacv1.UserKind:
		if ns, name, err := serviceaccount.SplitUsername(s.Name); err == nil && name == "default" {
			return defaultAccount(ns), true
		}
	}
	return Principal{}, false
}

// defaultAccount is the class of a namespace's default service account.
func defaultAccount(namespace string) Principal {
	info := serviceaccount.UserInfo(namespace, "default", "")
	return Principal{Name: "ServiceAccount " + namespace + "/default", User: info.GetName(), Groups: append(info.GetGroups(), user.AllAuthenticated)}
}

// appliesTo reports whether a binding subject names every identity of p, as the RBAC
// authorizer matches subjects; namespace is the binding's ("" for a ClusterRoleBinding).
func (p Principal) appliesTo(s rbacv1.Subject, namespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return p.User != "" && s.Name == p.User
	case rbacv1.GroupKind:
		return slices.Contains(p.Groups, s.Name)
	case rbacv1.ServiceAccountKind:
		ns := cmp.Or(s.Namespace, namespace)
		return ns != "" && p.User != "" && serviceaccount.MatchesUsername(ns, s.Name, p.User)
	}
	return false
}

// Grant is what one subject of one binding is given: its role's rules, where the binding
// applies (its namespace, or everywhere for a ClusterRoleBinding).
type Grant struct {
	// Binding is the RoleBinding or ClusterRoleBinding.
	Binding Ref
	// Subject is the binding's subject the grant is for.
	Subject rbacv1.Subject
	// Role is the binding's role (a Role in the binding's namespace, or a ClusterRole).
	Role Ref
	// Aggregated says the role is an aggregated ClusterRole: its rules are those of the
	// ClusterRoles its aggregationRule selects.
	Aggregated bool
	// Rules are the role's rules that apply where the binding does (a RoleBinding grants no
	// non-resource URL).
	Rules []rbacv1.PolicyRule
}

// Widening is a rule that a broad class holds after a change and did not hold before.
type Widening struct {
	// Principal is the class that gains the rule.
	Principal Principal
	// Namespace is where it gains it; "" for cluster-wide (a ClusterRoleBinding).
	Namespace string
	// Rule is one rule it gains (one verb on one resource, or one non-resource URL).
	Rule rbacv1.PolicyRule
	// Grant is a grant of the state after the change that gives the class the rule.
	Grant Grant
	// From is, when Grant.Role is aggregated, the ClusterRole it aggregates the rule from.
	From *Ref
}

// Widenings returns what the change from before to after lets a broad class (PrincipalOf)
// do that it could not before: for each class and each place (cluster-wide, or a namespace)
// whose grants the change touches, one rule of after that the rules of before do not cover
// (validation.Covers). vouched, when not nil, says which grants of after are allowed
// whatever they give: their rules count as held before. The result is sorted by class, then
// namespace.
func Widenings(before, after State, vouched func(Grant) bool) []Widening {
	old, now := grants(before), grants(after)
	type place struct {
		principal string
		namespace string
	}
	principals := map[string]Principal{}
	var places []place
	type key struct {
		binding Ref
		subject rbacv1.Subject
	}
	held := map[key]Grant{}
	for _, g := range old {
		held[key{g.Binding, g.Subject}] = g
	}
	for _, g := range now {
		if o, ok := held[key{g.Binding, g.Subject}]; ok && sameGrant(o, g) {
			continue
		}
		p, ok := PrincipalOf(g.Subject, g.Binding.Namespace)
		if !ok {
			continue
		}
		principals[p.Name] = p
		if pl := (place{p.Name, g.Binding.Namespace}); !slices.Contains(places, pl) {
			places = append(places, pl)
		}
	}
	slices.SortFunc(places, func(a, b place) int {
		return cmp.Or(cmp.Compare(a.principal, b.principal), cmp.Compare(a.namespace, b.namespace))
	})
	_, aggregates := resolveClusterRoles(after)
	var out []Widening
	for _, pl := range places {
		p := principals[pl.principal]
		owner := rulesOf(old, p, pl.namespace, nil)
		if vouched != nil {
			owner = append(owner, rulesOf(now, p, pl.namespace, vouched)...)
		}
		if pl.namespace != "" {
			// What it gains everywhere is reported once, cluster-wide.
			owner = append(owner, rulesOf(now, p, "", nil)...)
		}
		gained := rulesOf(now, p, pl.namespace, nil)
		covered, missing := validation.Covers(owner, gained)
		if covered {
			continue
		}
		w := Widening{Principal: p, Namespace: pl.namespace, Rule: missing[0]}
		// The grant named: one to the class itself rather than to a wider one it is in.
		best := -1
		for _, g := range now {
			if (g.Binding.Namespace != "" && g.Binding.Namespace != pl.namespace) || !p.appliesTo(g.Subject, g.Binding.Namespace) ||
				(vouched != nil && vouched(g)) || !covers(g.Rules, w.Rule) {
				continue
			}
			rank := 1
			if q, ok := PrincipalOf(g.Subject, g.Binding.Namespace); ok && q.Name == p.Name {
				rank = 2
			}
			if rank > best {
				best, w.Grant = rank, g
			}
		}
		if w.Grant.Aggregated {
			for _, src := range aggregates[w.Grant.Role.Name] {
				if covers(src.Rules, w.Rule) {
					w.From = &Ref{Kind: KindClusterRole, Name: src.Name}
					break
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// covers reports whether rules cover rule.
func covers(rules []rbacv1.PolicyRule, rule rbacv1.PolicyRule) bool {
	ok, _ := validation.Covers(rules, []rbacv1.PolicyRule{rule})
	return ok
}

// sameGrant reports whether two grants are the same subject of the same binding given the
// same role with the same rules.
func sameGrant(a, b Grant) bool {
	return a.Binding == b.Binding && a.Role == b.Role && a.Subject == b.Subject && reflect.DeepEqual(a.Rules, b.Rules)
}

// rulesOf returns the rules that grants give p in namespace ("" for cluster-wide: only
// ClusterRoleBindings), keeping only the vouched grants when vouched is not nil.
func rulesOf(grants []Grant, p Principal, namespace string, vouched func(Grant) bool) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range grants {
		if g.Binding.Namespace != "" && g.Binding.Namespace != namespace {
			continue
		}
		if vouched != nil && !vouched(g) {
			continue
		}
		if p.appliesTo(g.Subject, g.Binding.Namespace) {
			out = append(out, g.Rules...)
		}
	}
	return out
}

// grants returns every grant of s: one per subject of each binding whose role s holds (the
// authorizer ignores a binding to a missing role).
func grants(s State) []Grant {
	clusterRules, _ := resolveClusterRoles(s)
	aggregated := map[string]bool{}
	for _, r := range s.ClusterRoles {
		aggregated[r.Name] = isAggregated(r)
	}
	roles := map[Ref][]rbacv1.PolicyRule{}
	for _, r := range s.Roles {
		roles[Ref{KindRole, r.Namespace, r.Name}] = r.Rules
	}
	var out []Grant
	add := func(binding Ref, roleRef rbacv1.RoleRef, subjects []rbacv1.Subject) {
		role := Ref{Kind: roleRef.Kind, Name: roleRef.Name}
		var rules []rbacv1.PolicyRule
		var ok bool
		switch { // by kind and name, as the authorizer resolves it (the API server validates apiGroup)
		case role.Kind == KindClusterRole:
			rules, ok = clusterRules[role.Name]
		case role.Kind == KindRole && binding.Namespace != "":
			role.Namespace = binding.Namespace
			rules, ok = roles[role]
		}
		if !ok {
			return
		}
		if binding.Namespace != "" {
			rules = slices.DeleteFunc(slices.Clone(rules), func(r rbacv1.PolicyRule) bool { return len(r.NonResourceURLs) > 0 })
		}
		for _, subject := range subjects {
			out = append(out, Grant{Binding: binding, Subject: subject, Role: role, Aggregated: role.Kind == KindClusterRole && aggregated[role.Name], Rules: rules})
		}
	}
	for _, b := range s.ClusterRoleBindings {
		add(Ref{KindClusterRoleBinding, "", b.Name}, b.RoleRef, b.Subjects)
	}
	for _, b := range s.RoleBindings {
		add(Ref{KindRoleBinding, b.Namespace, b.Name}, b.RoleRef, b.Subjects)
	}
	return out
}

// isAggregated reports whether a ClusterRole's rules are aggregated from others.
func isAggregated(r rbacv1.ClusterRole) bool {
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

// source is a ClusterRole an aggregated ClusterRole takes rules from, with its rules.
type source struct {
	Name  string
	Rules []rbacv1.PolicyRule
}

// resolveClusterRoles returns the rules of every ClusterRole of s, an aggregated one's
// resolved, and for each aggregated one the ClusterRoles its aggregationRule selects (by
// name, each once, itself excluded) with their rules: what the API server's aggregation
// controller reads and writes. A selector that is not valid selects nothing; a role met again
// while resolving itself (a cycle) counts with the rules it holds.
func resolveClusterRoles(s State) (map[string][]rbacv1.PolicyRule, map[string][]source) {
	byName := map[string]rbacv1.ClusterRole{}
	for _, r := range s.ClusterRoles {
		byName[r.Name] = r
	}
	names := slices.Sorted(maps.Keys(byName))
	resolved := map[string][]rbacv1.PolicyRule{}
	resolving := map[string]bool{}
	sources := map[string][]source{}
	var resolve func(name string) []rbacv1.PolicyRule
	resolve = func(name string) []rbacv1.PolicyRule {
		r := byName[name]
		if rules, ok := resolved[name]; ok {
			return rules
		}
		if !isAggregated(r) || resolving[name] {
			return r.Rules
		}
		resolving[name] = true
		defer delete(resolving, name)
		var rules []rbacv1.PolicyRule
		var from []source
		for _, sel := range r.AggregationRule.ClusterRoleSelectors {
			selector, err := metav1.LabelSelectorAsSelector(&sel)
			if err != nil {
				continue
			}
			for _, n := range names {
				if n == name || slices.ContainsFunc(from, func(s source) bool { return s.Name == n }) || !selector.Matches(labels.Set(byName[n].Labels)) {
					continue
				}
				src := source{n, resolve(n)}
				from = append(from, src)
				for _, rule := range src.Rules {
					if !slices.ContainsFunc(rules, func(x rbacv1.PolicyRule) bool { return reflect.DeepEqual(x, rule) }) {
						rules = append(rules, rule)
					}
				}
			}
		}
		resolved[name], sources[name] = rules, from
		return rules
	}
	out := map[string][]rbacv1.PolicyRule{}
	for _, n := range names {
		out[n] = resolve(n)
	}
	return out, sources
}
