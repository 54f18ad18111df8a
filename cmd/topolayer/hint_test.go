package main

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
)

// TestLiveHint: the common failures of a write, as the API server and the REST mapper
// report them (wrapped, as the targets wrap them), get a hint that says what to do.
func TestLiveHint(t *testing.T) {
	cm := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-x", Name: "c"}
	shadow := contract.Identity{Group: "operator.openshift.io.shadow.topolayer.dev", Version: "v1", Resource: "authentications", Namespace: "hcp", Name: "cluster"}
	conflict := apierrors.NewApplyConflict([]metav1.StatusCause{
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-client-side-apply" using v1`, Field: ".data.a"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl-client-side-apply" using v1`, Field: ".data.b"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "cluster-authentication-operator"`, Field: ".data.c"},
	}, "Apply failed with 3 conflicts")
	tests := map[string]struct {
		err  error
		id   contract.Identity
		want []string // substrings; none means no hint
	}{
		"missing namespace": {err: fmt.Errorf("entry 3: %w", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "openshift-x")), id: cm,
			want: []string{"namespace openshift-x does not exist on the guest cluster"}},
		"missing CRD": {err: fmt.Errorf("resource %s: %w", shadow, &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Group: shadow.Group, Resource: shadow.Resource}}), id: shadow,
			want: []string{"does not serve authentications.operator.openshift.io.shadow.topolayer.dev", "topolayer shadow-crds"}},
		"field manager conflict": {err: fmt.Errorf("entry 1: %w", conflict), id: cm,
			want: []string{`--adopt-from "kubectl-client-side-apply" --adopt-from "cluster-authentication-operator"`, "operators[].adopt.fieldManagers"}},
		"another not found":       {err: apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "c"), id: cm},
		"forbidden":               {err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "c", fmt.Errorf("no")), id: cm},
		"conflict without causes": {err: apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "c", fmt.Errorf("stale")), id: cm},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := liveHint(tc.err, "guest", tc.id)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("hint %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("hint %q lacks %q", got, w)
				}
			}
		})
	}
}
