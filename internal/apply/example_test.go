package apply_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// A hosted plan goes to two targets: the HCP namespace of the management cluster, with the
// HostedControlPlane as owner, and the guest cluster; both write as the operator's service
// account.
func ExampleApplyPlan() {
	ctx := context.Background()
	var mgmtCfg, guestCfg *rest.Config // from kubeconfigs
	var plan *plans.Plan               // from a hosted translate.Engine

	sa := "system:serviceaccount:openshift-authentication-operator:authentication-operator"
	owner, err := hosted.ResolveHostedControlPlane(ctx, mgmtCfg, "clusters-example", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	mgmt, err := apply.NewClusterTarget("management", mgmtCfg, apply.Options{
		Impersonate: sa, Namespace: "clusters-example", Operator: "cluster-authentication-operator",
		HostedControlPlane: owner, RequireOwnership: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	guest, err := apply.NewClusterTarget("guest", guestCfg, apply.Options{
		Impersonate: sa, Operator: "cluster-authentication-operator", RequireOwnership: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	results, err := apply.ApplyPlan(ctx, plan, map[string]apply.Target{"management": mgmt, "guest": guest})
	for _, r := range results {
		fmt.Println(r.Status, r.Action, r.Cluster, r.Identity, r.Err)
	}
	if err != nil {
		fmt.Println(err)
	}
}

// Equivalent ignores what records who wrote an object and when, not what it holds.
func ExampleEquivalent() {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "resourceVersion": "7"},
		"data":     map[string]any{"k": "v"},
	}}
	would := live.DeepCopy()
	would.SetResourceVersion("8")
	fmt.Println(apply.Equivalent(live, would))
	_ = unstructured.SetNestedField(would.Object, "w", "data", "k")
	fmt.Println(apply.Equivalent(live, would))
	// Output:
	// true
	// false
}
