package rbacreach

import (
	"fmt"
	"testing"
)

// BenchmarkWidenings measures a plan of two writes judged against a cluster of the size of
// an OpenShift guest: 1,000 ClusterRoles (100 aggregated), 1,000 ClusterRoleBindings, and
// 200 namespaces of 5 Roles and 5 RoleBindings each.
func BenchmarkWidenings(b *testing.B) {
	var s State
	for i := range 1000 {
		cr := clusterRole(fmt.Sprintf("role-%d", i), map[string]string{fmt.Sprintf("agg-%d", i%100): "true"}, rule("get,list,watch", "", fmt.Sprintf("things%d", i)))
		if i < 100 {
			cr = aggregated(fmt.Sprintf("role-%d", i), map[string]string{fmt.Sprintf("agg-%d", i): "true"})
		}
		subject := account("ns", fmt.Sprintf("sa-%d", i))
		if i%10 == 0 {
			subject = group("system:authenticated")
		}
		_ = s.Put(cr)
		_ = s.Put(crb(fmt.Sprintf("binding-%d", i), cr.Name, subject))
	}
	for n := range 200 {
		ns := fmt.Sprintf("ns-%d", n)
		for i := range 5 {
			_ = s.Put(role(ns, fmt.Sprintf("role-%d", i), rule("get", "", "configmaps")))
			_ = s.Put(rb(ns, fmt.Sprintf("binding-%d", i), KindRole, fmt.Sprintf("role-%d", i), account(ns, "default")))
		}
	}
	after := s.Clone()
	_ = after.Put(clusterRole("role-150", map[string]string{"agg-50": "true"}, rule("get,list,watch,delete", "", "things150")))
	_ = after.Put(rb("ns-3", "new", KindClusterRole, "role-10", group("system:serviceaccounts:ns-3")))
	b.ResetTimer()
	for b.Loop() {
		if len(Widenings(s, after, nil)) == 0 {
			b.Fatal("no widening")
		}
	}
}
