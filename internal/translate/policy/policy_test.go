package policy_test

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/policy"
)

func TestIsPrivileged(t *testing.T) {
	for _, tc := range []struct {
		gr   schema.GroupResource
		want bool
	}{
		{schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, true},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, true},
		{schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}, true},
		{schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}, true},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, false},
		{schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, false},
	} {
		if got := policy.IsPrivileged(tc.gr); got != tc.want {
			t.Errorf("IsPrivileged(%s) = %v, want %v", tc.gr, got, tc.want)
		}
	}
}

func TestBroadSubject(t *testing.T) {
	for _, tc := range []struct {
		s    rbacv1.Subject
		want bool
	}{
		{rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "team"}, true},
		{rbacv1.Subject{Kind: rbacv1.UserKind, Name: "system:authenticated"}, true},
		{rbacv1.Subject{Kind: rbacv1.UserKind, Name: "system:anonymous"}, true},
		{rbacv1.Subject{Kind: rbacv1.UserKind, Name: "alice"}, false},
		{rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "ns", Name: "op"}, false},
	} {
		if got := policy.BroadSubject(tc.s); got != tc.want {
			t.Errorf("BroadSubject(%v) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestLabelMatches(t *testing.T) {
	for _, tc := range []struct {
		label      policy.Label
		key, value string
		want       bool
	}{
		{policy.Label{Key: "app"}, "app", "anything", true},
		{policy.Label{Key: "app", Value: "kube-apiserver"}, "app", "kube-apiserver", true},
		{policy.Label{Key: "app", Value: "kube-apiserver"}, "app", "oauth", false},
		{policy.Label{Key: "hypershift.openshift.io/"}, "hypershift.openshift.io/control-plane", "true", true},
		{policy.Label{Key: "hypershift.openshift.io/"}, "example.com/hypershift.openshift.io", "true", false},
		{policy.Label{Key: "app"}, "apps", "x", false},
	} {
		if got := tc.label.Matches(tc.key, tc.value); got != tc.want {
			t.Errorf("%s.Matches(%s=%s) = %v, want %v", tc.label, tc.key, tc.value, got, tc.want)
		}
	}
}

func TestCeilingFor(t *testing.T) {
	c := &policy.RBACCeiling{Classes: []contract.Class{contract.ClassManagement}}
	if c.For(contract.ClassManagement) != c || c.For(contract.ClassUserWorkload) != nil {
		t.Errorf("a ceiling for Management applies to Management only")
	}
	if all := (&policy.RBACCeiling{}); all.For(contract.ClassUserWorkload) != all {
		t.Errorf("a ceiling without classes applies to every class")
	}
	var none *policy.RBACCeiling
	if none.For(contract.ClassManagement) != nil {
		t.Errorf("a nil ceiling applies to nothing")
	}
	var p *policy.Policy
	if p.PodSecurityMode() != policy.PodSecurityStrip {
		t.Errorf("a nil policy strips")
	}
}
