package rbacreach

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func rule(verbs, groups, resources string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: strings.Split(verbs, ","), APIGroups: strings.Split(groups, ","), Resources: strings.Split(resources, ",")}
}

func clusterRole(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func aggregated(name string, selector map[string]string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: selector}}}}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func userSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func account(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

func crb(name, clusterRole string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: KindClusterRole, Name: clusterRole}, Subjects: subjects}
}

func rb(ns, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}, Subjects: subjects}
}

// live is a cluster like a fresh one: system:authenticated reads discovery and its own
// reviews; edit and view aggregate the roles labelled for them, and nobody is bound to them.
func live() State {
	var s State
	for _, o := range []any{
		clusterRole("basic-user", nil, rule("create", "authorization.k8s.io", "selfsubjectaccessreviews,selfsubjectrulesreviews")),
		clusterRole("discovery", nil, rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*"}}),
		crb("basic-users", "basic-user", group("system:authenticated")),
		crb("discovery", "discovery", group("system:authenticated"), group("system:unauthenticated")),
		aggregated("edit", map[string]string{"aggregate-to-edit": "true"}),
		clusterRole("aggregate-to-edit-core", map[string]string{"aggregate-to-edit": "true"}, rule("get,list,create,delete", "", "secrets,pods,configmaps")),
		clusterRole("secret-reader", nil, rule("get", "", "secrets")),
		aggregated("viewer", map[string]string{"aggregate-to-viewer": "true"}),
		crb("viewers", "viewer", group("system:authenticated")),
		role("team", "config-reader", rule("get", "", "configmaps")),
	} {
		if err := s.Put(o); err != nil {
			panic(err)
		}
	}
	return s
}

// with is live with the objects put and the references deleted.
func with(objects ...any) State {
	s := live().Clone()
	for _, o := range objects {
		if ref, ok := o.(Ref); ok {
			s.Delete(ref)
			continue
		}
		if err := s.Put(o); err != nil {
			panic(err)
		}
	}
	return s
}

// summary prints a widening as "class|namespace|verb group/resource or URL|binding|role|from".
func summary(w Widening) string {
	r := w.Rule
	what := strings.Join(r.Verbs, ",") + " " + strings.Join(r.NonResourceURLs, ",")
	if len(r.NonResourceURLs) == 0 {
		what = strings.Join(r.Verbs, ",") + " " + strings.Join(r.APIGroups, ",") + "/" + strings.Join(r.Resources, ",")
	}
	from := ""
	if w.From != nil {
		from = w.From.String()
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s", w.Principal.Name, w.Namespace, what, w.Grant.Binding, w.Grant.Role, from)
}

func TestWidenings(t *testing.T) {
	vouchPlanBinding := func(g Grant) bool { return g.Binding.Name == "vouched" }
	for _, tc := range []struct {
		name    string
		after   State
		vouched func(Grant) bool
		want    []string
	}{
		{name: "no change", after: live()},
		{name: "a binding to what the class already holds grants nothing new",
			after: with(clusterRole("self-review", nil, rule("create", "authorization.k8s.io", "selfsubjectaccessreviews")),
				crb("self-review", "self-review", group("system:authenticated")))},
		{name: "a role bound to system:authenticated by a live binding is widened",
			after: with(clusterRole("basic-user", nil, rule("create", "authorization.k8s.io", "selfsubjectaccessreviews"), rule("get", "", "secrets"))),
			want:  []string{"Group system:authenticated||get /secrets|ClusterRoleBinding basic-users|ClusterRole basic-user|"}},
		{name: "a live role that grants secrets is bound to system:serviceaccounts",
			after: with(crb("sa", "secret-reader", group("system:serviceaccounts"))),
			want:  []string{"Group system:serviceaccounts||get /secrets|ClusterRoleBinding sa|ClusterRole secret-reader|"}},
		{name: "a written aggregated role selects a live role that grants secrets",
			after: with(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "harmless"}, AggregationRule: &rbacv1.AggregationRule{
				ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"aggregate-to-edit": "true"}}}}},
				crb("harmless", "harmless", group("system:unauthenticated"))),
			want: []string{"Group system:unauthenticated||get /secrets|ClusterRoleBinding harmless|ClusterRole harmless|ClusterRole aggregate-to-edit-core"}},
		{name: "a written role labelled for a live aggregated role bound to system:authenticated",
			after: with(clusterRole("more", map[string]string{"aggregate-to-viewer": "true"}, rule("list", "", "secrets"))),
			want:  []string{"Group system:authenticated||list /secrets|ClusterRoleBinding viewers|ClusterRole viewer|ClusterRole more"}},
		{name: "an aggregated role of aggregated roles resolves through both",
			after: with(aggregated("outer", map[string]string{"outer": "true"}),
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "edit", Labels: map[string]string{"outer": "true"}},
					AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"aggregate-to-edit": "true"}}}}},
				crb("outer", "outer", group("system:authenticated"))),
			want: []string{"Group system:authenticated||get /secrets|ClusterRoleBinding outer|ClusterRole outer|ClusterRole edit"}},
		{name: "a RoleBinding of system:authenticated to the live edit role, in its namespace",
			after: with(rb("team", "everyone-edits", KindClusterRole, "edit", group("system:authenticated"))),
			want:  []string{"Group system:authenticated|team|get /secrets|RoleBinding team/everyone-edits|ClusterRole edit|ClusterRole aggregate-to-edit-core"}},
		{name: "a RoleBinding grants no non-resource URL",
			after: with(clusterRole("urls", nil, rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}),
				rb("team", "urls", KindClusterRole, "urls", group("system:authenticated")))},
		{name: "a ClusterRoleBinding grants non-resource URLs",
			after: with(clusterRole("urls", nil, rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}),
				crb("urls", "urls", userSubject("system:anonymous"))),
			want: []string{"Group system:unauthenticated||get /metrics|ClusterRoleBinding urls|ClusterRole urls|"}},
		{name: "a namespace's default service account gains a Role's rules",
			after: with(rb("team", "default-reads", KindRole, "config-reader", account("", "default"))),
			want:  []string{"ServiceAccount team/default|team|get /configmaps|RoleBinding team/default-reads|Role team/config-reader|"}},
		{name: "a default service account named as a user",
			after: with(crb("default-secrets", "secret-reader", userSubject("system:serviceaccount:team:default"))),
			want:  []string{"ServiceAccount team/default||get /secrets|ClusterRoleBinding default-secrets|ClusterRole secret-reader|"}},
		{name: "the service accounts of a namespace gain, beyond what every one already has",
			after: with(crb("team-sa", "secret-reader", group("system:serviceaccounts:team")), crb("all-sa", "secret-reader", group("system:serviceaccounts")),
				rb("team", "team-edit", KindClusterRole, "edit", group("system:serviceaccounts:team"))),
			want: []string{
				"Group system:serviceaccounts||get /secrets|ClusterRoleBinding all-sa|ClusterRole secret-reader|",
				"Group system:serviceaccounts:team||get /secrets|ClusterRoleBinding team-sa|ClusterRole secret-reader|",
				"Group system:serviceaccounts:team|team|list /secrets|RoleBinding team/team-edit|ClusterRole edit|ClusterRole aggregate-to-edit-core",
			}},
		{name: "a named user or service account is not broad",
			after: with(crb("alice", "secret-reader", userSubject("alice"), account("team", "builder")))},
		{name: "a binding to a role the cluster does not hold grants nothing",
			after: with(crb("dangling", "missing", group("system:authenticated")))},
		{name: "deleting grants nothing",
			after: with(Ref{Kind: KindClusterRoleBinding, Name: "viewers"}, Ref{Kind: KindClusterRole, Name: "basic-user"})},
		{name: "a vouched grant gives what it gives",
			after:   with(crb("vouched", "secret-reader", group("system:authenticated"))),
			vouched: vouchPlanBinding},
		{name: "a vouched grant does not vouch for another",
			after:   with(crb("vouched", "secret-reader", group("system:authenticated")), crb("other", "edit", group("system:authenticated"))),
			vouched: vouchPlanBinding,
			want:    []string{"Group system:authenticated||list /secrets|ClusterRoleBinding other|ClusterRole edit|ClusterRole aggregate-to-edit-core"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, w := range Widenings(live(), tc.after, tc.vouched) {
				got = append(got, summary(w))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("widenings (-want +got):\n%s", diff)
			}
		})
	}
}
