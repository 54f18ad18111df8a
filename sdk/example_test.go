package sdk_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/sdk"
)

// Run an operator in process over a one-file input directory and list what it wrote: the
// reconciler's apply, and its event, named deterministically from the run's time.
func Example() {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	op := &sdk.Operator{
		Name: "demo-operator",
		InputResources: contract.InputResources{ApplyConfigurationResources: contract.ResourceList{
			ExactResources: []contract.ExactResourceID{sdk.Exact(configMaps, "openshift-config", "settings")},
		}},
		OutputResources: contract.OutputResources{ManagementResources: contract.OutputResourceList{
			EventingNamespaces: []string{"demo-operator"},
			ExactResources:     []contract.ExactResourceID{sdk.Exact(configMaps, "demo", "greeting")},
		}},
		Controllers: []sdk.Controller{{
			Name: "demo-Copy",
			New: func(d sdk.Deps) (reconcile.Reconciler, error) {
				return reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
					settings := &corev1.ConfigMap{}
					if err := d.Client.Get(ctx, client.ObjectKey{Namespace: "openshift-config", Name: "settings"}, settings); err != nil {
						return reconcile.Result{}, err
					}
					greeting := coreac.ConfigMap("greeting", "demo").WithData(map[string]string{"greeting": settings.Data["greeting"]})
					if err := d.Client.Apply(ctx, greeting, client.FieldOwner("demo-Copy"), client.ForceOwnership); err != nil {
						return reconcile.Result{}, err
					}
					d.LegacyRecorder.Event(settings, corev1.EventTypeNormal, "GreetingCopied", "copied the greeting")
					return reconcile.Result{}, nil
				}), nil
			},
		}},
	}

	tmp, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(tmp)
	in := filepath.Join(tmp, "in", "namespaces", "openshift-config", "core", "configmaps")
	_ = os.MkdirAll(in, 0o755)
	_ = os.WriteFile(filepath.Join(in, "settings.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: openshift-config\ndata:\n  greeting: hello\n"), 0o644)

	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	out, err := op.ApplyConfiguration(context.Background(), sdk.Options{
		InputDir: filepath.Join(tmp, "in"), OutputDir: filepath.Join(tmp, "out"), Now: now,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range out.Mutations {
		fmt.Println(m.Class, m.Metadata.Action, m.Identity())
	}
	for _, r := range out.ControllerResults.ControllerResults {
		fmt.Println(r.ControllerName, r.Status)
	}
	// Output:
	// Management Apply configmaps demo/greeting
	// Management Create events demo-operator/demo-operator.1816687ec0570000.ae5f825f
	// demo-Copy Succeeded
}
