package sdk

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appsac "k8s.io/client-go/applyconfigurations/apps/v1"
	coreac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

var testNow = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// testInput is an input directory with a ConfigMap demo/cm, a Deployment demo/web and a
// ClusterRole reader.
var testInput = map[string]string{
	"namespaces/demo/core/configmaps/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: demo
data:
  k: v
`,
	"namespaces/demo/apps/deployments.yaml": `apiVersion: apps/v1
kind: DeploymentList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    namespace: demo
  spec:
    replicas: 1
    selector:
      matchLabels: {app: web}
    template:
      metadata:
        labels: {app: web}
      spec:
        containers:
        - name: web
          image: web
`,
	"cluster-scoped-resources/rbac.authorization.k8s.io/clusterroles/reader.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
`,
}

func exact(group, resource, ns, name string) contract.ExactResourceID {
	return Exact(schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}, ns, name)
}

// testOperator declares ConfigMap demo/cm, Namespace demo and Deployment demo/web for
// Management, ClusterRole reader for UserWorkload, and events in demo-operator.
func testOperator(controllers ...Controller) *Operator {
	return &Operator{
		Name: "demo-operator",
		OutputResources: contract.OutputResources{
			ManagementResources: contract.OutputResourceList{
				EventingNamespaces: []string{"demo-operator"},
				ExactResources: []contract.ExactResourceID{
					exact("", "configmaps", "demo", "cm"),
					exact("", "namespaces", "", "demo"),
					exact("apps", "deployments", "demo", "web"),
				},
			},
			UserWorkloadResources: contract.OutputResourceList{
				ExactResources: []contract.ExactResourceID{exact("rbac.authorization.k8s.io", "clusterroles", "", "reader")},
			},
		},
		Controllers: controllers,
	}
}

// reconcilerFunc makes a controller from a function of the run's dependencies.
func reconcilerFunc(name string, f func(ctx context.Context, d Deps) (reconcile.Result, error)) Controller {
	return Controller{Name: name, New: func(d Deps) (reconcile.Reconciler, error) {
		return reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) { return f(ctx, d) }), nil
	}}
}

func run(t *testing.T, op *Operator, controllers ...string) (*contract.OutputDir, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	res, err := op.ApplyConfiguration(context.Background(), Options{InputDir: contracttest.TempTree(t, testInput), OutputDir: out, Now: testNow, Controllers: controllers})
	if res != nil {
		read, rerr := contract.ReadOutputDir(out, contract.ReadOptions{})
		if rerr != nil {
			t.Fatalf("the output directory does not read back: %v", rerr)
		}
		if len(read.Mutations) != len(res.Mutations) {
			t.Fatalf("read back %d mutations, wrote %d", len(read.Mutations), len(res.Mutations))
		}
	}
	return res, err
}

// recorded is what a test checks of one mutation.
type recorded struct {
	Class        contract.Class
	Action       contract.Action
	Object       string
	FieldManager string
	PatchType    string
	Body         string
	Options      string
}

func summarize(ms []contract.Mutation) []recorded {
	var out []recorded
	for _, m := range ms {
		out = append(out, recorded{
			Class: m.Class, Action: m.Metadata.Action, Object: m.Identity().String(),
			FieldManager: m.Metadata.FieldManager, PatchType: m.Metadata.PatchType,
			Body: string(m.Body), Options: string(m.Options),
		})
	}
	return out
}

func cm(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "demo"}, Data: data}
}

func TestWritesAreRecorded(t *testing.T) {
	const cmBody = "apiVersion: v1\ndata:\n  k: w\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: demo\n"
	tests := map[string]struct {
		do   func(ctx context.Context, c client.Client) error
		want []recorded
	}{
		"create a namespace": {
			do: func(ctx context.Context, c client.Client) error {
				return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}})
			},
			want: []recorded{{Class: "Management", Action: "Create", Object: "namespaces demo",
				Body: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\nspec: {}\nstatus: {}\n"}},
		},
		"create with options": {
			do: func(ctx context.Context, c client.Client) error {
				return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}, client.DryRunAll, client.FieldOwner("demo"))
			},
			want: []recorded{{Class: "Management", Action: "Create", Object: "namespaces demo",
				Body:    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\nspec: {}\nstatus: {}\n",
				Options: "dryRun:\n- All\nfieldManager: demo\n"}},
		},
		"a create the server rejects is not recorded": {
			do: func(ctx context.Context, c client.Client) error {
				if err := c.Create(ctx, cm(nil)); err == nil {
					return errors.New("creating an existing ConfigMap succeeded")
				}
				return nil
			},
		},
		"update": {
			do: func(ctx context.Context, c client.Client) error {
				o := &corev1.ConfigMap{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "cm"}, o); err != nil {
					return err
				}
				o.Data["k"] = "w"
				return c.Update(ctx, o)
			},
			want: []recorded{{Class: "Management", Action: "Update", Object: "configmaps demo/cm",
				Body: "apiVersion: v1\ndata:\n  k: w\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: demo\n  resourceVersion: \"999\"\n"}},
		},
		"merge patch keeps the raw bytes": {
			do: func(ctx context.Context, c client.Client) error {
				return c.Patch(ctx, cm(nil), client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"w"}}`)), client.FieldOwner("demo"))
			},
			want: []recorded{{Class: "Management", Action: "Patch", Object: "configmaps demo/cm", FieldManager: "demo",
				PatchType: contract.PatchTypeMerge, Body: `{"data":{"k":"w"}}`, Options: "fieldManager: demo\n"}},
		},
		"strategic merge patch": {
			do: func(ctx context.Context, c client.Client) error {
				return c.Patch(ctx, cm(nil), client.RawPatch(types.StrategicMergePatchType, []byte(`{"data":{"k":"w"}}`)))
			},
			want: []recorded{{Class: "Management", Action: "Patch", Object: "configmaps demo/cm",
				PatchType: contract.PatchTypeStrategicMerge, Body: `{"data":{"k":"w"}}`}},
		},
		"json patch becomes a YAML sequence": {
			do: func(ctx context.Context, c client.Client) error {
				return c.Patch(ctx, cm(nil), client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/data/k","value":"w"}]`)))
			},
			want: []recorded{{Class: "Management", Action: "Patch", Object: "configmaps demo/cm",
				PatchType: contract.PatchTypeJSON, Body: "- op: replace\n  path: /data/k\n  value: w\n"}},
		},
		"server-side apply": {
			do: func(ctx context.Context, c client.Client) error {
				return c.Apply(ctx, coreac.ConfigMap("cm", "demo").WithData(map[string]string{"k": "w"}), client.FieldOwner("demo"), client.ForceOwnership)
			},
			want: []recorded{{Class: "Management", Action: "Apply", Object: "configmaps demo/cm", FieldManager: "demo",
				Body: cmBody, Options: "fieldManager: demo\nforce: true\n"}},
		},
		"server-side apply through Patch": {
			do: func(ctx context.Context, c client.Client) error {
				u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "cm", "namespace": "demo"}, "data": map[string]any{"k": "w"}}}
				return c.Patch(ctx, u, client.Apply, client.FieldOwner("demo"), client.ForceOwnership) //nolint:staticcheck // still used by existing reconcilers
			},
			want: []recorded{{Class: "Management", Action: "Apply", Object: "configmaps demo/cm", FieldManager: "demo",
				Body: cmBody, Options: "fieldManager: demo\nforce: true\n"}},
		},
		"delete of a cluster-scoped object": {
			do: func(ctx context.Context, c client.Client) error {
				return c.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"}})
			},
			want: []recorded{{Class: "UserWorkload", Action: "Delete", Object: "clusterroles.rbac.authorization.k8s.io reader",
				Body: "apiVersion: rbac.authorization.k8s.io/v1\nkind: DeleteOptions\n"}},
		},
		"status writes": {
			do: func(ctx context.Context, c client.Client) error {
				d := &appsv1.Deployment{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, d); err != nil {
					return err
				}
				d.Status.Replicas = 1
				if err := c.Status().Update(ctx, d); err != nil {
					return err
				}
				if err := c.Status().Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"status":{"replicas":2}}`))); err != nil {
					return err
				}
				return c.Status().Apply(ctx, appsac.Deployment("web", "demo").WithStatus(appsac.DeploymentStatus().WithReplicas(3)),
					client.FieldOwner("demo"), client.ForceOwnership)
			},
			want: []recorded{
				{Class: "Management", Action: "ApplyStatus", Object: "deployments.apps demo/web", FieldManager: "demo",
					Body:    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: demo\nstatus:\n  replicas: 3\n",
					Options: "fieldManager: demo\nforce: true\n"},
				{Class: "Management", Action: "PatchStatus", Object: "deployments.apps demo/web",
					PatchType: contract.PatchTypeMerge, Body: `{"status":{"replicas":2}}`},
			},
		},
		"other subresources are refused": {
			do: func(ctx context.Context, c client.Client) error {
				err := c.SubResource("scale").Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"}},
					client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":2}}`)))
				if err == nil || !strings.Contains(err.Error(), "status subresource only") {
					return errors.New("a scale patch was not refused")
				}
				return nil
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			op := testOperator(reconcilerFunc("demo-A", func(ctx context.Context, d Deps) (reconcile.Result, error) {
				return reconcile.Result{}, tc.do(ctx, d.Client)
			}))
			out, err := run(t, op)
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(out.Mutations)
			// UpdateStatus bodies carry the whole object; check it apart.
			var rest []recorded
			for _, r := range got {
				if r.Action == contract.ActionUpdateStatus {
					if !strings.Contains(r.Body, "status:\n  replicas: 1\n") {
						t.Errorf("UpdateStatus body lacks the status:\n%s", r.Body)
					}
					continue
				}
				rest = append(rest, r)
			}
			if diff := cmp.Diff(tc.want, rest); diff != "" {
				t.Errorf("mutations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsAreRecorded(t *testing.T) {
	op := testOperator(reconcilerFunc("demo-A", func(_ context.Context, d Deps) (reconcile.Result, error) {
		d.Recorder.Eventf(nil, nil, corev1.EventTypeNormal, "Synced", "Sync", "synced %d objects", 2)
		d.LegacyRecorder.Event(nil, corev1.EventTypeWarning, "Slow", "took long")
		return reconcile.Result{}, nil
	}))
	out, err := run(t, op)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Mutations) != 2 {
		t.Fatalf("want 2 events, got %+v", summarize(out.Mutations))
	}
	name := regexp.MustCompile(`^demo-operator\.[0-9a-f]+\.[0-9a-f]{8}$`)
	want := map[string]string{"reason: Synced\n": "action: Sync\n", "reason: Slow\n": "message: took long\n"}
	for i, m := range out.Mutations {
		var part string
		for reason, p := range want {
			if strings.Contains(string(m.Body), reason) {
				part = p
			}
		}
		if !m.Identity().IsEvent() || m.Class != contract.ClassManagement || m.Metadata.Namespace != "demo-operator" || m.Metadata.ControllerInstanceName != "" {
			t.Errorf("event %d: %+v", i, m.Metadata)
		}
		if !name.MatchString(m.Metadata.Name) {
			t.Errorf("event %d: name %q", i, m.Metadata.Name)
		}
		for _, part := range []string{part, "firstTimestamp: \"2025-01-01T00:00:00Z\"\n", "involvedObject:\n  kind: Deployment\n  name: demo-operator\n  namespace: demo-operator\n"} {
			if !strings.Contains(string(m.Body), part) {
				t.Errorf("event %d: body lacks %q:\n%s", i, part, m.Body)
			}
		}
	}
	again, _ := run(t, op)
	if diff := cmp.Diff(summarize(out.Mutations), summarize(again.Mutations)); diff != "" {
		t.Errorf("events are not deterministic:\n%s", diff)
	}
}

func TestRunOutcomes(t *testing.T) {
	createCM := func(name string) func(context.Context, Deps) (reconcile.Result, error) {
		return func(ctx context.Context, d Deps) (reconcile.Result, error) {
			return reconcile.Result{}, d.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo"}})
		}
	}
	createNamespace := func(ctx context.Context, d Deps) (reconcile.Result, error) {
		return reconcile.Result{}, d.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}})
	}
	counter := func(converge bool) func(context.Context, Deps) (reconcile.Result, error) {
		n := 0
		return func(ctx context.Context, d Deps) (reconcile.Result, error) {
			n++
			v := n
			if converge {
				v = min(n, 2)
			}
			ac := coreac.ConfigMap("cm", "demo").WithData(map[string]string{"n": strings.Repeat("x", v)})
			return reconcile.Result{RequeueAfter: time.Minute}, d.Client.Apply(ctx, ac, client.FieldOwner("demo"))
		}
	}
	tests := map[string]struct {
		controllers []Controller
		flags       []string
		wantErr     []error
		wantResults string
		wantWrites  int
		timeout     time.Duration
	}{
		"undeclared write": {
			controllers: []Controller{reconcilerFunc("demo-A", createCM("other"))},
			wantErr:     []error{ErrUndeclared},
			wantResults: "controllerResults:\n- controllerName: demo-A\n  status: Succeeded\n",
			wantWrites:  1,
		},
		"reconcile error": {
			controllers: []Controller{reconcilerFunc("demo-A", func(context.Context, Deps) (reconcile.Result, error) {
				return reconcile.Result{}, errors.New("configmap \"x\" not found")
			})},
			wantErr:     []error{ErrControllerFailed},
			wantResults: "controllerResults:\n- controllerName: demo-A\n  errors:\n  - message: configmap \"x\" not found\n  status: Failed\n",
		},
		"skipped and selected": {
			controllers: []Controller{reconcilerFunc("demo-B", createNamespace), reconcilerFunc("demo-A", createCM("other"))},
			flags:       []string{"-demo-A", "*"},
			wantResults: "controllerResults:\n- controllerName: demo-A\n  status: Skipped\n- controllerName: demo-B\n  status: Succeeded\n",
			wantWrites:  1,
		},
		"each controller starts from the input": {
			controllers: []Controller{reconcilerFunc("demo-A", createCM("new")), reconcilerFunc("demo-B", func(ctx context.Context, d Deps) (reconcile.Result, error) {
				return reconcile.Result{}, d.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "new"}, &corev1.ConfigMap{})
			})},
			wantErr:     []error{ErrControllerFailed, ErrUndeclared},
			wantResults: "controllerResults:\n- controllerName: demo-A\n  status: Succeeded\n- controllerName: demo-B\n  errors:\n  - message: configmaps \"new\" not found\n  status: Failed\n",
			wantWrites:  1,
		},
		"requeue until nothing new": {
			controllers: []Controller{reconcilerFunc("demo-A", counter(true))},
			wantResults: "controllerResults:\n- controllerName: demo-A\n  status: Succeeded\n",
			wantWrites:  2,
		},
		"requeue forever": {
			controllers: []Controller{reconcilerFunc("demo-A", counter(false))},
			wantErr:     []error{ErrControllerFailed},
			wantResults: "controllerResults:\n- controllerName: demo-A\n  errors:\n  - message: request \"/\" still asks to be requeued after 3 reconciles\n  status: Failed\n",
			wantWrites:  3,
		},
		"timeout drops late writes": {
			controllers: []Controller{reconcilerFunc("demo-A", func(ctx context.Context, d Deps) (reconcile.Result, error) {
				<-ctx.Done()
				time.Sleep(20 * time.Millisecond)
				return reconcile.Result{}, d.Client.Create(context.Background(), cm(nil))
			})},
			timeout:     50 * time.Millisecond,
			wantErr:     []error{ErrControllerFailed},
			wantResults: "controllerResults:\n- controllerName: demo-A\n  errors:\n  - message: 'did not finish within 50ms: context deadline exceeded'\n  status: Failed\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			op := testOperator(tc.controllers...)
			op.MaxReconciles, op.ControllerTimeout = 3, tc.timeout
			out, err := run(t, op, tc.flags...)
			for _, want := range tc.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("error %v, want %v", err, want)
				}
			}
			if len(tc.wantErr) == 0 && err != nil {
				t.Errorf("unexpected error: %v", err)
			}
			results, _ := contract.MarshalControllerResults(out.ControllerResults)
			if diff := cmp.Diff(tc.wantResults, string(results)); diff != "" {
				t.Errorf("controller results (-want +got):\n%s", diff)
			}
			if len(out.Mutations) != tc.wantWrites {
				t.Errorf("%d mutations, want %d: %+v", len(out.Mutations), tc.wantWrites, summarize(out.Mutations))
			}
		})
	}
}

func TestUndeclaredWritesAreFiledUnderUnspecified(t *testing.T) {
	op := testOperator(reconcilerFunc("demo-A", func(ctx context.Context, d Deps) (reconcile.Result, error) {
		return reconcile.Result{}, d.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "demo"}})
	}))
	out, err := run(t, op)
	if err == nil || !strings.Contains(err.Error(), "Create configmaps demo/other by demo-A: not declared in output-resources") {
		t.Fatalf("error %v", err)
	}
	if len(out.Mutations) != 1 || out.Mutations[0].Class != contract.ClassUnspecified {
		t.Errorf("mutations %+v", summarize(out.Mutations))
	}
}

func TestPanicIsReported(t *testing.T) {
	op := testOperator(reconcilerFunc("demo-A", func(context.Context, Deps) (reconcile.Result, error) { panic("boom") }))
	out, err := run(t, op)
	if !errors.Is(err, ErrControllerFailed) {
		t.Fatalf("error %v", err)
	}
	r := out.ControllerResults.ControllerResults[0]
	if r.Status != contract.ControllerPanicked || r.Errors[0].Message != "boom" || !strings.Contains(r.PanicStack, "goroutine") {
		t.Errorf("result %+v", r)
	}
}

func TestSelectControllers(t *testing.T) {
	op := testOperator(reconcilerFunc("a", nil), reconcilerFunc("b", nil))
	tests := map[string]struct {
		flags   []string
		want    map[string]bool
		wantErr string
	}{
		"default is all":          {want: map[string]bool{"a": true, "b": true}},
		"star":                    {flags: []string{"*"}, want: map[string]bool{"a": true, "b": true}},
		"one":                     {flags: []string{"a"}, want: map[string]bool{"a": true, "b": false}},
		"all but one":             {flags: []string{"-a", "*"}, want: map[string]bool{"a": false, "b": true}},
		"the first entry wins":    {flags: []string{"a", "-a"}, want: map[string]bool{"a": true, "b": false}},
		"disabled wins over star": {flags: []string{"*", "-b"}, want: map[string]bool{"a": true, "b": false}},
		"unknown":                 {flags: []string{"c"}, wantErr: `--controllers: unknown controller "c" (known: [a b])`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := op.selectControllers(tc.flags)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := reconcilerFunc("a", func(context.Context, Deps) (reconcile.Result, error) { return reconcile.Result{}, nil })
	tests := map[string]struct {
		op   *Operator
		want string
	}{
		"valid":         {op: testOperator(ok)},
		"no name":       {op: &Operator{Controllers: []Controller{ok}}, want: "operator: name is required"},
		"no controller": {op: &Operator{Name: "x"}, want: "operator: at least one controller is required"},
		"duplicate":     {op: testOperator(ok, ok), want: `controllers[1]: name "a": duplicate`},
		"reserved name": {op: testOperator(Controller{Name: "-a", New: ok.New}), want: `controllers[0]: name "-a": must be non-empty`},
		"no factory":    {op: testOperator(Controller{Name: "a"}), want: "controllers[0] a: New is required"},
		"invalid declaration": {op: func() *Operator {
			o := testOperator(ok)
			o.OutputResources.ManagementResources.ExactResources[0].Version = ""
			return o
		}(), want: "output-resources:"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			contracttest.CheckErr(t, tc.op.Validate(), tc.want)
		})
	}
}

func TestOutputDirMayHoldTheHarnessLogs(t *testing.T) {
	op := testOperator(reconcilerFunc("demo-A", func(context.Context, Deps) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	in := contracttest.TempTree(t, testInput)
	tests := map[string]struct {
		files   map[string]string
		wantErr bool
	}{
		"absent":             {},
		"logs only":          {files: map[string]string{"out/stdout.log": "", "out/stderr.log": "x"}},
		"something else":     {files: map[string]string{"out/notes.txt": ""}, wantErr: true},
		"logs and something": {files: map[string]string{"out/stdout.log": "", "out/Management/x": ""}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := contracttest.TempTree(t, tc.files)
			out := filepath.Join(dir, "out")
			err := op.Run(context.Background(), in, out, testNow, nil)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr {
				if _, err := contract.ReadOutputDir(out, contract.ReadOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(out, contract.ControllerResultsFile)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestCommand(t *testing.T) {
	op := testOperator(reconcilerFunc("demo-A", func(context.Context, Deps) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	op.OutputResources.ConfigurationResources.ExactResources = []contract.ExactResourceID{exact("config.openshift.io", "ingresses", "", "cluster")}
	in := contracttest.TempTree(t, testInput)
	tests := map[string]struct {
		args       []string
		wantOut    string
		wantErrOut string
		wantErr    string
	}{
		"input-resources adds the configuration outputs": {
			args:    []string{"input-resources"},
			wantOut: "applyConfigurationResources:\n  exactResources:\n  - group: config.openshift.io\n    name: cluster\n    resource: ingresses\n    version: v1\noperandResources:\n  configurationResources: {}\n  managementResources: {}\n  userWorkloadResources: {}\n",
		},
		"apply-configuration": {
			args:       []string{"apply-configuration", "--input-dir", in, "--output-dir", filepath.Join(t.TempDir(), "out"), "--now", "2025-01-01T00:00:00Z"},
			wantErrOut: "controller demo-A: Succeeded\n",
		},
		"bad now": {
			args:    []string{"apply-configuration", "--input-dir", in, "--output-dir", "x", "--now", "yesterday"},
			wantErr: `--now "yesterday": not an RFC3339 time`,
		},
		"missing flags": {
			args:    []string{"apply-configuration"},
			wantErr: "--input-dir is required\n--output-dir is required",
		},
		"unknown controller": {
			args:    []string{"apply-configuration", "--input-dir", in, "--output-dir", "x", "--controllers", "demo-A,nope"},
			wantErr: `unknown controller "nope"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := op.Command()
			cmd.SetArgs(tc.args)
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			err := cmd.Execute()
			if contracttest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrOut, errOut.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
	var out bytes.Buffer
	cmd := op.Command()
	cmd.SetArgs([]string{"output-resources"})
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if _, err := contract.ParseOutputResources(out.Bytes()); err != nil || !strings.HasPrefix(out.String(), "configurationResources:\n") {
		t.Errorf("output-resources printed %q: %v", out.String(), err)
	}
}

func TestMetadataNameKey(t *testing.T) {
	create := reconcilerFunc("demo-A", func(ctx context.Context, d Deps) (reconcile.Result, error) {
		return reconcile.Result{}, d.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}})
	})
	in := contracttest.TempTree(t, testInput)
	for _, tc := range []struct {
		key       contract.NameKey
		want, not string
	}{{"", "\nname: demo\n", "mame:"}, {contract.NameKeyName, "\nname: demo\n", "mame:"}, {contract.NameKeyLegacy, "\nmame: demo\n", "\nname:"}} {
		t.Run(string(tc.key), func(t *testing.T) {
			op := testOperator(create)
			op.MetadataNameKey = tc.key
			out := filepath.Join(t.TempDir(), "out")
			if err := op.Run(context.Background(), in, out, testNow, nil); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(out, "*", "Create", "cluster-scoped-resources", "core", "namespaces", "*-metadata-demo.yaml"))
			if len(files) != 1 {
				t.Fatalf("metadata files %v, want one", files)
			}
			data, _ := os.ReadFile(files[0])
			if !strings.Contains(string(data), tc.want) || strings.Contains(string(data), tc.not) {
				t.Errorf("metadata\n%s\nwant %q and not %q", data, tc.want, tc.not)
			}
			got, err := contract.ReadOutputDir(out, contract.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Mutations) == 0 || got.Mutations[0].Metadata.Name != "demo" {
				t.Errorf("read back %+v", got.Mutations)
			}
		})
	}
}
