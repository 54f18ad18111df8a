package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	hypershift "github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// waitAllowed waits until the RBAC authorizer of the server of cs lets user do verb on
// resource in namespace (role changes reach it through an informer).
func waitAllowed(t *testing.T, cs *kubernetes.Clientset, user, namespace, verb, resource string, want bool) {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		Groups:             []string{"system:serviceaccounts", "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Resource: resource},
	}}
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return res.Status.Allowed == want, nil
	})
	if err != nil {
		t.Fatalf("%s %s %s in %s: allowed never became %v: %v", user, verb, resource, namespace, want, err)
	}
}

// TestCLIApplyImpersonation applies, as a service account allowed ConfigMaps but not
// Secrets in the HCP namespace, a plan of a ConfigMap and a Secret: the validation dry-run
// reports the denied Secret, the command fails, and nothing was written (the ConfigMap comes
// first in the plan and is absent). Once Secrets are granted, re-applying converges.
func TestCLIApplyImpersonation(t *testing.T) {
	bin := cliBinary(t)
	f := newCLIFixture(t, true)
	hcp := hosted.HostedControlPlane()
	cs, _ := clients(t, hosted.Config(cluster.Management))
	ctx := t.Context()

	sa := "e2e-applier-" + uniqueSuffix(t)
	user := "system:serviceaccount:" + hcp.Namespace + ":" + sa
	if _, err := cs.CoreV1().ServiceAccounts(hcp.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writeVerbs := []string{"get", "list", "create", "update", "patch"}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: hcp.Namespace},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: writeVerbs},
			{APIGroups: []string{hypershift.HostedControlPlaneGVR().Group}, Resources: []string{hypershift.HostedControlPlaneGVR().Resource}, Verbs: []string{"get"}},
		},
	}
	if role, err := cs.RbacV1().Roles(hcp.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	} else {
		t.Cleanup(func() {
			_ = cs.RbacV1().Roles(hcp.Namespace).Delete(context.Background(), role.Name, metav1.DeleteOptions{})
			_ = cs.RbacV1().RoleBindings(hcp.Namespace).Delete(context.Background(), role.Name, metav1.DeleteOptions{})
			_ = cs.CoreV1().ServiceAccounts(hcp.Namespace).Delete(context.Background(), sa, metav1.DeleteOptions{})
		})
	}
	if _, err := cs.RbacV1().RoleBindings(hcp.Namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: hcp.Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: hcp.Namespace}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, cs, user, hcp.Namespace, "create", "configmaps", true)
	waitAllowed(t, cs, user, hcp.Namespace, "create", "secrets", false)

	var cmName, secretName string
	for _, e := range f.plan.Entries {
		switch e.Target.Resource {
		case "configmaps":
			cmName = e.Target.Name
		case "secrets":
			secretName = e.Target.Name
		}
	}
	absent := func(what string) {
		t.Helper()
		if _, err := cs.CoreV1().ConfigMaps(hcp.Namespace).Get(ctx, cmName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the ConfigMap %s was written (or cannot be read: %v)", what, cmName, err)
		}
		if _, err := cs.CoreV1().Secrets(hcp.Namespace).Get(ctx, secretName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the Secret %s was written (or cannot be read: %v)", what, secretName, err)
		}
	}

	asSA := []string{"--as-service-account", hcp.Namespace + "/" + sa, "-o", "json"}
	stdout, stderr, err := cliRun(t, bin, f.args("apply", asSA...)...)
	if err == nil {
		t.Fatalf("apply as %s without secrets succeeded:\n%s", sa, stdout)
	}
	t.Logf("denied apply: %v\n%s", err, stderr)
	var denied bool
	for _, r := range parseApply(t, stdout) {
		switch r.Target {
		case "secrets/" + hcp.Namespace + "/" + secretName:
			denied = r.Status == "failed" && strings.Contains(r.Error, "forbidden") && strings.Contains(r.Error, user)
		default:
			if r.Status != "not-run" {
				t.Errorf("%s: %s, want not-run", r.Target, r.Status)
			}
		}
	}
	if !denied {
		t.Errorf("the Secret's denial is not reported:\n%s", stdout)
	}
	if !strings.Contains(stderr, "nothing was written") {
		t.Errorf("stderr does not say nothing was written:\n%s", stderr)
	}
	absent("after the denied apply")

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: writeVerbs})
	if _, err := cs.RbacV1().Roles(hcp.Namespace).Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, cs, user, hcp.Namespace, "create", "secrets", true)

	stdout, stderr, err = cliRun(t, bin, f.args("apply", asSA...)...)
	if err != nil {
		t.Fatalf("apply after the grant: %v\n%s%s", err, stdout, stderr)
	}
	for _, r := range parseApply(t, stdout) {
		if r.Status != "applied" {
			t.Errorf("%s: %s %s", r.Target, r.Status, r.Error)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps(hcp.Namespace).Get(ctx, cmName, metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	sec, err := cs.CoreV1().Secrets(hcp.Namespace).Get(ctx, secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["token"]) != "secret" {
		t.Errorf("secret data = %q", sec.Data)
	}
}
