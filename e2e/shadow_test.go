package e2e

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// TestShadowAuthenticationStatus creates the shadow of the cluster-scoped
// authentications.operator.openshift.io/cluster as a namespaced object on the management
// server, and checks that the API server, not topolayer, gives it the original's semantics:
// the status subresource (status ignored on create and on update, written through /status)
// and the original's schema validation.
//
// It works in a namespace of its own rather than the HCP namespace, which later tests fill
// with the real shadow objects an operator writes.
func TestShadowAuthenticationStatus(t *testing.T) {
	cfg := hosted.Config(cluster.Management)
	ns := newNamespace(t, cfg)
	_, dyn := clients(t, cfg)
	authentications := dyn.Resource(shadowOperatorV1.WithResource("authentications")).Namespace(ns)
	ctx := t.Context()

	obj := object(t, `
apiVersion: operator.openshift.io.shadow.topolayer.dev/v1
kind: Authentication
metadata: {name: cluster}
spec: {managementState: Managed}
status: {readyReplicas: 3}
`)
	created, err := authentications.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the shadow authentication: %v", err)
	}
	if got, found, _ := unstructured.NestedInt64(created.Object, "status", "readyReplicas"); found {
		t.Errorf("create kept status.readyReplicas=%d: the status subresource should own status", got)
	}

	status := object(t, `
readyReplicas: 2
conditions:
- {type: OAuthServerAvailable, status: "True", lastTransitionTime: "2026-01-02T03:04:05Z", reason: AsExpected}
`).Object
	if err := unstructured.SetNestedField(created.Object, status, "status"); err != nil {
		t.Fatal(err)
	}
	updated, err := authentications.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status through /status: %v", err)
	}

	// An update of the main resource changes spec, never status.
	if err := unstructured.SetNestedField(updated.Object, "Debug", "spec", "logLevel"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(updated.Object, int64(7), "status", "readyReplicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := authentications.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}

	got, err := authentications.Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedInt64(got.Object, "status", "readyReplicas"); v != 2 {
		t.Errorf("status.readyReplicas = %d, want 2 (set through /status; the main resource's 7 ignored)", v)
	}
	if conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions"); len(conds) != 1 {
		t.Errorf("status.conditions = %v, want the one condition set through /status", conds)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "logLevel"); v != "Debug" {
		t.Errorf("spec.logLevel = %q, want Debug", v)
	}

	// The shadow keeps the original's schema: an unknown managementState is rejected.
	bad := object(t, `
apiVersion: operator.openshift.io.shadow.topolayer.dev/v1
kind: Authentication
metadata: {name: invalid}
spec: {managementState: Sometimes}
`)
	if _, err := authentications.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("create with spec.managementState=Sometimes: err = %v, want Invalid", err)
	}
}

// object decodes one YAML object for a test.
func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("test object: %v", err)
	}
	return obj
}
