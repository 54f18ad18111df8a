package routing

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
)

func TestShadows(t *testing.T) {
	core := ""
	apps := "apps"
	builtin := Rule{Name: RuleHostedManagement, Match: Match{Class: contract.ClassManagement}, Cluster: ClusterManagement}
	tests := map[string]struct {
		user Rule
		want bool
	}{
		"same match, later name":      {Rule{Name: "my-rule", Match: Match{Class: contract.ClassManagement}}, true},
		"same match, earlier name":    {Rule{Name: "a-rule", Match: Match{Class: contract.ClassManagement}}, false},
		"same match, higher priority": {Rule{Name: "my-rule", Priority: 1, Match: Match{Class: contract.ClassManagement}}, false},
		"equally specific, overlaps":  {Rule{Name: "my-rule", Match: Match{Resource: "configmaps"}}, true},
		"equally specific, disjoint":  {Rule{Name: "my-rule", Match: Match{Class: contract.ClassUserWorkload}}, false},
		"more specific":               {Rule{Name: "my-rule", Match: Match{Class: contract.ClassManagement, Group: &core}}, false},
		"other group":                 {Rule{Name: "my-rule", Match: Match{Group: &apps}}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := builtin.Shadows(tc.user); got != tc.want {
				t.Errorf("Shadows = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMatchOverlaps(t *testing.T) {
	tests := map[string]struct {
		a, b Match
		want bool
	}{
		"empty":                    {Match{}, Match{Name: "x"}, true},
		"prefix and exact":         {Match{Namespace: "openshift-*"}, Match{Namespace: "openshift-a"}, true},
		"prefix and other exact":   {Match{Namespace: "openshift-*"}, Match{Namespace: "kube-a"}, false},
		"two prefixes":             {Match{Name: "a*"}, Match{Name: "ab*"}, true},
		"two disjoint prefixes":    {Match{Name: "a*"}, Match{Name: "b*"}, false},
		"labels with two values":   {Match{Labels: map[string]string{"k": "1"}}, Match{Labels: map[string]string{"k": "2"}}, false},
		"labels on different keys": {Match{Labels: map[string]string{"k": "1"}}, Match{Labels: map[string]string{"j": "2"}}, true},
		"different resources":      {Match{Resource: "secrets"}, Match{Resource: "configmaps"}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.a.Overlaps(tc.b); got != tc.want {
				t.Errorf("Overlaps = %v, want %v", got, tc.want)
			}
			if got := tc.b.Overlaps(tc.a); got != tc.want {
				t.Errorf("reversed: Overlaps = %v, want %v", got, tc.want)
			}
		})
	}
}
