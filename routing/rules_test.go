package routing_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

func str(s string) *string { return &s }

func TestTableDecides(t *testing.T) {
	cm := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-config", Name: "sample-settings"}
	table := &routing.Table{Rules: append(routing.HostedDefaults(routing.ConvertClusterRBAC),
		routing.Rule{Name: "config-to-guest", Match: routing.Match{Class: contract.ClassManagement, Namespace: "openshift-config"}, Cluster: routing.ClusterGuest},
		routing.Rule{Name: "b-drop-settings", Match: routing.Match{Class: contract.ClassManagement, Namespace: "openshift-config", Name: "sample-*"}, Disposition: routing.Dropped},
		routing.Rule{Name: "a-keep-settings", Match: routing.Match{Class: contract.ClassManagement, Namespace: "openshift-config", Name: "sample-*"}, Cluster: routing.ClusterManagement},
		routing.Rule{Name: "z-priority", Match: routing.Match{Class: contract.ClassManagement, Namespace: "openshift-config", Name: "sample-*"}, Cluster: routing.ClusterGuest, Priority: 10},
		routing.Rule{Name: "labelled", Match: routing.Match{Class: contract.ClassManagement, Labels: map[string]string{"tier": "guest"}}, Cluster: routing.ClusterGuest},
	)}
	for _, tc := range []struct {
		name     string
		obj      routing.Object
		wantRule string
		want     routing.Disposition
		cluster  string
	}{
		{"class default", routing.Object{Class: contract.ClassUserWorkload, Identity: cm}, routing.RuleHostedUserWorkload, routing.Apply, routing.ClusterGuest},
		{"namespace beats class", routing.Object{Class: contract.ClassManagement, Identity: contract.Identity{Resource: "secrets", Namespace: "openshift-config", Name: "x"}}, "config-to-guest", routing.Apply, routing.ClusterGuest},
		{"priority breaks a specificity tie", routing.Object{Class: contract.ClassManagement, Identity: cm}, "z-priority", routing.Apply, routing.ClusterGuest},
		{"labels add specificity", routing.Object{Class: contract.ClassManagement, Identity: contract.Identity{Resource: "secrets", Namespace: "ns", Name: "x"}, Labels: map[string]string{"tier": "guest"}}, "labelled", routing.Apply, routing.ClusterGuest},
		{"namespaces absorbed", routing.Object{Class: contract.ClassManagement, Identity: contract.Identity{Resource: "namespaces", Name: "openshift-foo"}}, routing.RuleAbsorbNamespaces + "/Management", routing.Absorbed, routing.ClusterManagement},
		{"namespaces of the guest are created", routing.Object{Class: contract.ClassUserWorkload, Identity: contract.Identity{Resource: "namespaces", Name: "openshift-foo"}}, routing.RuleHostedUserWorkload, routing.Apply, routing.ClusterGuest},
		{"cluster RBAC converted", routing.Object{Class: contract.ClassManagement, Identity: contract.Identity{Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "x"}}, routing.RuleClusterRBAC + "/Management/clusterroles", routing.Apply, routing.ClusterManagement},
		{"no rule", routing.Object{Class: contract.ClassUnspecified, Identity: cm}, routing.NoRule, routing.Rejected, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := table.Route(tc.obj)
			if d.Rule != tc.wantRule || d.Disposition != tc.want || d.Cluster != tc.cluster {
				t.Fatalf("got %+v, want rule %s, %s on %q", d, tc.wantRule, tc.want, tc.cluster)
			}
		})
	}
}

func TestNameBreaksFullTies(t *testing.T) {
	rules := []routing.Rule{
		{Name: "b", Match: routing.Match{Resource: "secrets"}, Cluster: "x"},
		{Name: "a", Match: routing.Match{Resource: "secrets"}, Cluster: "y"},
	}
	for _, order := range [][]routing.Rule{rules, {rules[1], rules[0]}} {
		if d := (&routing.Table{Rules: order}).Route(routing.Object{Identity: contract.Identity{Resource: "secrets"}}); d.Rule != "a" {
			t.Fatalf("rule %s won; the outcome must not depend on rule order", d.Rule)
		}
	}
}

func TestRejectClusterRBAC(t *testing.T) {
	table := &routing.Table{Rules: routing.HostedDefaults(routing.RejectClusterRBAC)}
	d := table.Route(routing.Object{Class: contract.ClassManagement, Identity: contract.Identity{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings", Name: "x"}})
	if d.Disposition != routing.Rejected || d.Reason == "" {
		t.Fatalf("got %+v", d)
	}
}

func TestMatchString(t *testing.T) {
	m := routing.Match{Class: contract.ClassManagement, Group: str(""), Resource: "secrets", Name: "a*", Labels: map[string]string{"b": "1", "a": "2"}}
	if got, want := m.String(), `class=Management,group="",resource=secrets,name=a*,label:a=2,label:b=1`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
