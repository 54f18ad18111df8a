package apply

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestDecodeOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		in      string
		want    writeOptions
		wantErr bool
	}{
		"none":          {},
		"field manager": {in: "fieldManager: sample-status\n", want: writeOptions{FieldManager: "sample-status"}},
		"force":         {in: "fieldManager: m\nforce: true\n", want: writeOptions{FieldManager: "m", Force: true}},
		"unknown keys":  {in: "dryRun: [All]\nfieldValidation: Strict\n"},
		"json":          {in: `{"force":true}`, want: writeOptions{Force: true}},
		"malformed":     {in: "force: [\n", wantErr: true},
		"wrong type":    {in: "force: maybe\n", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeOptions([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

const ours = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: openshift-sample--settings
  namespace: clusters-example
  annotations:
    topolayer.dev/standalone-group: ""
    topolayer.dev/standalone-resource: configmaps
    topolayer.dev/standalone-namespace: openshift-sample
    topolayer.dev/standalone-name: settings
  labels:
    topolayer.dev/operator: sample
`

func TestCheckOwnership(t *testing.T) {
	create := contract.Mutation{Metadata: contract.Metadata{Action: contract.ActionCreate, Name: "openshift-sample--settings", Namespace: "clusters-example", ResourceType: contract.ResourceType{Version: "v1", Resource: "configmaps"}}}
	status := create
	status.Metadata.Action = contract.ActionApplyStatus
	patch := create
	patch.Metadata.Action = contract.ActionPatch
	otherSource := strings.Replace(ours, "name: settings", "name: other", 1)
	otherOperator := strings.Replace(ours, "operator: sample", "operator: someone-else", 1)
	bare := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: clusters-example\n"
	for name, tc := range map[string]struct {
		m          contract.Mutation
		desire     string // "" for no object (patch, delete)
		live       string
		operator   string
		require    bool
		adopt      bool
		wantReason string // "" means no conflict
		wantAdopt  bool
		adoptable  bool // the conflict says how to adopt
	}{
		"same object":                         {m: create, desire: ours, live: ours},
		"same object, operator option":        {m: create, desire: ours, live: ours, operator: "sample"},
		"another source":                      {m: create, desire: ours, live: otherSource, wantReason: "another source identity"},
		"another operator":                    {m: create, desire: ours, live: otherOperator, wantReason: `operator "someone-else"`},
		"another operator, option":            {m: create, desire: bare, live: ours, operator: "other", wantReason: `operator "sample"`},
		"unowned, standalone":                 {m: create, desire: ours, live: bare},
		"unowned, hosted":                     {m: create, desire: ours, live: bare, require: true, wantReason: "not written by topolayer", adoptable: true},
		"unowned, hosted, adopted":            {m: create, desire: ours, live: bare, require: true, adopt: true, wantAdopt: true},
		"unowned, standalone, adopted":        {m: create, desire: bare, live: bare, operator: "sample", adopt: true, wantAdopt: true},
		"unowned status write, adopted":       {m: status, desire: bare, live: bare, require: true, adopt: true, wantAdopt: true},
		"unowned patch, adopt on":             {m: patch, live: bare, require: true, adopt: true, wantReason: "cannot adopt"},
		"unowned patch, adopt on, standalone": {m: patch, live: bare, adopt: true},
		"another operator, adopt on":          {m: create, desire: ours, live: otherOperator, require: true, adopt: true, wantReason: `operator "someone-else"`},
		"another source, adopt on":            {m: create, desire: ours, live: otherSource, require: true, adopt: true, wantReason: "another source identity"},
		"ours, adopt on":                      {m: create, desire: ours, live: ours, require: true, adopt: true},
		"unowned, hosted, status write":       {m: status, desire: bare, live: bare, require: true},
		"patch of ours":                       {m: create, live: ours, operator: "sample", require: true},
		"patch of another operator's":         {m: create, live: otherOperator, operator: "sample", wantReason: "someone-else"},
		"body without annotations":            {m: create, desire: bare, live: otherSource, operator: "sample"},
	} {
		t.Run(name, func(t *testing.T) {
			var desire *unstructured.Unstructured
			if tc.desire != "" {
				desire = obj(t, tc.desire)
			}
			adopted, err := checkOwnership("management", tc.m, desire, obj(t, tc.live), tc.operator, tc.require, tc.adopt)
			if adopted != tc.wantAdopt {
				t.Errorf("adopted = %v, want %v", adopted, tc.wantAdopt)
			}
			if tc.wantReason == "" {
				if err != nil {
					t.Fatalf("unexpected conflict: %v", err)
				}
				return
			}
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConflictError", err)
			}
			if !strings.Contains(ce.Reason, tc.wantReason) {
				t.Errorf("reason %q does not contain %q", ce.Reason, tc.wantReason)
			}
			if ce.Adoptable != tc.adoptable || strings.Contains(ce.Error(), "--adopt-from MANAGER") != tc.adoptable {
				t.Errorf("adoptable = %v, want %v: %v", ce.Adoptable, tc.adoptable, ce)
			}
			if ce.Target != "management" || ce.Identity.Name != tc.m.Metadata.Name {
				t.Errorf("conflict names %s %s", ce.Target, ce.Identity)
			}
		})
	}
}

func TestEquivalent(t *testing.T) {
	live := obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: ns
  uid: 1234
  resourceVersion: "10"
  generation: 1
  creationTimestamp: "2025-01-01T00:00:00Z"
  managedFields:
  - manager: topolayer
    operation: Update
    time: "2025-01-01T00:00:00Z"
data:
  k: v
`)
	for name, tc := range map[string]struct {
		edit func(u *unstructured.Unstructured)
		want bool
	}{
		"same":              {edit: func(*unstructured.Unstructured) {}, want: true},
		"resourceVersion":   {edit: func(u *unstructured.Unstructured) { u.SetResourceVersion("11") }, want: true},
		"generation":        {edit: func(u *unstructured.Unstructured) { u.SetGeneration(2) }, want: true},
		"managedFields":     {edit: func(u *unstructured.Unstructured) { u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "x"}}) }, want: true},
		"data":              {edit: func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "w", "data", "k") }},
		"label":             {edit: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) }},
		"ownerReferences":   {edit: func(u *unstructured.Unstructured) { u.SetOwnerReferences([]metav1.OwnerReference{{Name: "x"}}) }},
		"creationTimestamp": {edit: func(u *unstructured.Unstructured) { u.SetCreationTimestamp(metav1.Now()) }},
	} {
		t.Run(name, func(t *testing.T) {
			other := live.DeepCopy()
			tc.edit(other)
			if got := Equivalent(live, other); got != tc.want {
				t.Errorf("Equivalent = %v, want %v", got, tc.want)
			}
			if !Equivalent(live, live.DeepCopy()) {
				t.Error("an object is not equivalent to its copy")
			}
		})
	}
	if Equivalent(live, nil) || !Equivalent(nil, nil) {
		t.Error("nil handling")
	}
}

func TestHostedControlPlaneOwner(t *testing.T) {
	owner := &metav1.OwnerReference{APIVersion: "hypershift.openshift.io/v1beta1", Kind: "HostedControlPlane", Name: "example", UID: "u1"}
	configMaps := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: clusters-example\n"
	for name, tc := range map[string]struct {
		opts       Options
		action     contract.Action
		ns         string
		gvk        schema.GroupVersionKind
		namespaced bool
		body       string
		wantRefs   int
	}{
		"create":                      {action: contract.ActionCreate, wantRefs: 1},
		"update":                      {action: contract.ActionUpdate, wantRefs: 1},
		"apply":                       {action: contract.ActionApply, wantRefs: 1},
		"apply, owner already there":  {action: contract.ActionApply, body: cm + "  ownerReferences:\n  - {apiVersion: hypershift.openshift.io/v1beta1, kind: HostedControlPlane, name: example, uid: u0}\n", wantRefs: 1},
		"apply, another owner":        {action: contract.ActionApply, body: cm + "  ownerReferences:\n  - {apiVersion: v1, kind: ConfigMap, name: b, uid: u2}\n", wantRefs: 2},
		"old plan's owner annotation": {action: contract.ActionApply, body: cm + "  annotations:\n    topolayer.dev/owner-hosted-control-plane: example\n", wantRefs: 1},
		"apply status":                {action: contract.ActionApplyStatus},
		"update status":               {action: contract.ActionUpdateStatus},
		"event":                       {action: contract.ActionCreate, gvk: schema.GroupVersionKind{Version: "v1", Kind: "Event"}},
		"cluster-scoped":              {action: contract.ActionCreate, namespaced: false, ns: "-"},
		"another namespace":           {action: contract.ActionCreate, ns: "other"},
		"no owner":                    {action: contract.ActionCreate, opts: Options{Namespace: "clusters-example"}},
		"owner without namespace":     {action: contract.ActionCreate, opts: Options{HostedControlPlane: owner}},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.opts == (Options{}) {
				tc.opts = Options{Namespace: "clusters-example", HostedControlPlane: owner}
			}
			if tc.gvk.Empty() {
				tc.gvk = configMaps
			}
			if tc.body == "" {
				tc.body = cm
			}
			namespaced := tc.ns != "-"
			switch tc.ns {
			case "", "-":
				tc.ns = "clusters-example"
			}
			w := &writer{
				t:          &ClusterTarget{name: "management", opts: tc.opts.defaulted()},
				m:          contract.Mutation{Metadata: contract.Metadata{Action: tc.action, Name: "a", Namespace: tc.ns}, Body: []byte(tc.body)},
				gvk:        tc.gvk,
				namespaced: namespaced,
			}
			if err := w.parse(nil); err != nil {
				t.Fatal(err)
			}
			if _, ok := w.desire.GetAnnotations()[namespaces.AnnotationOwnerHCP]; ok {
				t.Error("the owner annotation is left")
			}
			refs := w.desire.GetOwnerReferences()
			if len(refs) != tc.wantRefs {
				t.Fatalf("ownerReferences = %+v, want %d", refs, tc.wantRefs)
			}
			if tc.wantRefs > 0 && !slices.Contains(refs, *owner) {
				t.Errorf("ownerReferences = %+v, want one to %+v", refs, *owner)
			}
		})
	}
}

func TestAppliedNoOp(t *testing.T) {
	live := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
  namespace: ns
  resourceVersion: "10"
  labels: {app: a, other: x}
  managedFields:
  - manager: op
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:labels: {f:app: {}}}
      f:spec:
        f:replicas: {}
        f:template:
          f:spec:
            f:containers:
              'k:{"name":"c"}':
                .: {}
                f:image: {}
                f:name: {}
                f:ports:
                  'k:{"containerPort":8080,"protocol":"TCP"}':
                    .: {}
                    f:containerPort: {}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: c
        image: img
        imagePullPolicy: IfNotPresent
        ports:
        - {containerPort: 8080, protocol: TCP}
`)
	const applied = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
  namespace: ns
  labels: {app: a}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: c
        image: img
        ports:
        - containerPort: 8080
`
	for name, tc := range map[string]struct {
		applied, manager, subresource string
		want                          bool
	}{
		"same fields":                {applied: applied, manager: "op", want: true},
		"another manager, no fields": {applied: applied, manager: "someone", want: true},
		"a changed value":            {applied: strings.Replace(applied, "replicas: 2", "replicas: 3", 1), manager: "op"},
		"a new field":                {applied: strings.Replace(applied, "image: img", "image: img\n        workingDir: /", 1), manager: "op"},
		"a dropped owned field":      {applied: strings.Replace(applied, "  replicas: 2\n", "", 1), manager: "op"},
		"a dropped owned list item":  {applied: strings.Replace(applied, "        ports:\n        - containerPort: 8080\n", "", 1), manager: "op"},
		"another list length":        {applied: strings.Replace(applied, "- containerPort: 8080", "- containerPort: 8080\n        - containerPort: 9090", 1), manager: "op"},
		"status subresource manager": {applied: applied, manager: "op", subresource: "status", want: true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := AppliedNoOp(obj(t, tc.applied), live, tc.manager, tc.subresource); got != tc.want {
				t.Errorf("AppliedNoOp = %v, want %v", got, tc.want)
			}
		})
	}
	if AppliedNoOp(nil, live, "op", "") || AppliedNoOp(live, nil, "op", "") {
		t.Error("nil: want false")
	}
}

func TestUpdatedNoOp(t *testing.T) {
	live := obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: ns
  resourceVersion: "3"
  labels: {app: a}
  managedFields:
  - manager: topolayer
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:data: {f:k: {}}, f:metadata: {f:labels: {f:app: {}}}}
  - manager: kubectl
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {f:data: {f:extra: {}}}
data: {k: v, extra: x}
status: {phase: Ready}
`)
	const updated = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  labels: {app: a}\ndata: {k: v, extra: x}\n"
	for name, tc := range map[string]struct {
		updated, subresource string
		want                 bool
	}{
		"same fields":                 {updated: updated, want: true},
		"a changed value":             {updated: strings.Replace(updated, "k: v", "k: w", 1)},
		"drops a field another set":   {updated: strings.Replace(updated, ", extra: x", "", 1)},
		"drops a label":               {updated: strings.Replace(updated, "  labels: {app: a}\n", "", 1)},
		"status, same":                {updated: updated + "status: {phase: Ready}\n", subresource: "status", want: true},
		"status, changed":             {updated: updated + "status: {phase: Failed}\n", subresource: "status"},
		"status ignores the rest":     {updated: strings.Replace(updated, "k: v", "k: w", 1) + "status: {phase: Ready}\n", subresource: "status", want: true},
		"status, unset live field ok": {updated: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nstatus: {phase: Ready}\n", subresource: "status", want: true},
		"status, another label":       {updated: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {app: b}}\nstatus: {phase: Ready}\n", subresource: "status"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := UpdatedNoOp(obj(t, tc.updated), live, tc.subresource); got != tc.want {
				t.Errorf("UpdatedNoOp = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPatchedNoOp(t *testing.T) {
	live := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  resourceVersion: '3'\ndata: {a: '1', b: '2'}\n")
	for name, tc := range map[string]struct {
		patchType, patch string
		want             bool
	}{
		"merge, same value":       {patchType: contract.PatchTypeMerge, patch: `{"data":{"a":"1"}}`, want: true},
		"merge, another value":    {patchType: contract.PatchTypeMerge, patch: `{"data":{"a":"2"}}`},
		"merge, removes a key":    {patchType: contract.PatchTypeMerge, patch: `{"data":{"b":null}}`},
		"merge, removes nothing":  {patchType: contract.PatchTypeMerge, patch: `{"data":{"c":null}}`, want: true},
		"json, same value":        {patchType: contract.PatchTypeJSON, patch: `[{"op":"replace","path":"/data/a","value":"1"}]`, want: true},
		"json, adds a key":        {patchType: contract.PatchTypeJSON, patch: `[{"op":"add","path":"/data/c","value":"3"}]`},
		"json, a failing test":    {patchType: contract.PatchTypeJSON, patch: `[{"op":"test","path":"/data/a","value":"9"}]`},
		"strategic, never proven": {patchType: contract.PatchTypeStrategicMerge, patch: `{"data":{"a":"1"}}`},
		"malformed":               {patchType: contract.PatchTypeMerge, patch: `{`},
	} {
		t.Run(name, func(t *testing.T) {
			if got := PatchedNoOp(live, tc.patchType, []byte(tc.patch)); got != tc.want {
				t.Errorf("PatchedNoOp = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStripServerFields(t *testing.T) {
	u := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  uid: x\n  resourceVersion: '3'\n  creationTimestamp: null\n  generation: 2\n  labels: {a: b}\n")
	stripServerFields(u)
	if u.GetUID() != "" || u.GetResourceVersion() != "" || u.GetGeneration() != 0 || u.GetLabels()["a"] != "b" {
		t.Errorf("after strip: %v", u.Object["metadata"])
	}
	if _, ok := u.Object["metadata"].(map[string]any)["creationTimestamp"]; ok {
		t.Error("creationTimestamp is left")
	}
}

func TestParseServiceAccount(t *testing.T) {
	ns, name, err := ParseServiceAccount("system:serviceaccount:openshift-authentication-operator:authentication-operator")
	if err != nil || ns != "openshift-authentication-operator" || name != "authentication-operator" {
		t.Errorf("got %q %q %v", ns, name, err)
	}
	for _, bad := range []string{"", "admin", "system:serviceaccount:ns", "system:serviceaccount::n", "system:serviceaccount:a:b:c"} {
		if _, _, err := ParseServiceAccount(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	if _, err := NewClusterTarget("x", nil, Options{}); err == nil {
		t.Error("nil config: want an error")
	}
}

func TestPatchType(t *testing.T) {
	for _, s := range []string{contract.PatchTypeJSON, contract.PatchTypeMerge, contract.PatchTypeStrategicMerge, contract.PatchTypeApply} {
		if pt, err := patchType(s); err != nil || string(pt) != s {
			t.Errorf("%s: %s %v", s, pt, err)
		}
	}
	if _, err := patchType("text/plain"); err == nil {
		t.Error("unknown patch type: want an error")
	}
}

// fakeTarget records what it is asked.
type fakeTarget struct {
	name    string
	applied []string
	fail    map[string]error // by object name, on dry-run and apply
	skip    map[string]bool
	exists  map[string]bool // by object name: a dry-run finds it there
}

func (f *fakeTarget) Name() string { return f.name }

func (f *fakeTarget) Apply(_ context.Context, m contract.Mutation) (Result, error) {
	if err := f.fail[m.Metadata.Name]; err != nil {
		return Result{}, err
	}
	if f.skip[m.Metadata.Name] {
		return Result{Change: ChangeNone, Skipped: true}, nil
	}
	f.applied = append(f.applied, m.Metadata.Name)
	return Result{Change: ChangeCreate}, nil
}

func (f *fakeTarget) DryRun(_ context.Context, m contract.Mutation) (Result, error) {
	if err := f.fail[m.Metadata.Name]; err != nil {
		return Result{}, err
	}
	if f.exists[m.Metadata.Name] {
		return Result{Change: ChangeUpdate}, nil
	}
	return Result{Change: ChangeCreate}, nil
}

func planOf(entries ...plans.Entry) *plans.Plan {
	return &plans.Plan{Topology: plans.TopologyHosted, Entries: entries}
}

func entry(cluster, ns, name string, action contract.Action) plans.Entry {
	md := contract.Metadata{Action: action, Namespace: ns, Name: name, ResourceType: contract.ResourceType{Version: "v1", Resource: "configmaps"}}
	return plans.Entry{Action: action, Disposition: routing.Apply, Target: plans.Target{Cluster: cluster}, Mutation: &contract.Mutation{Metadata: md}}
}

func TestApplyPlan(t *testing.T) {
	ctx := t.Context()
	t.Run("rejected entry", func(t *testing.T) {
		f := &fakeTarget{name: "management"}
		p := planOf(entry("management", "ns", "a", contract.ActionCreate), plans.Entry{Disposition: routing.Rejected, Reason: "no"})
		if _, err := ApplyPlan(ctx, p, map[string]Target{"management": f}); err == nil || len(f.applied) != 0 {
			t.Errorf("err %v, applied %v", err, f.applied)
		}
	})
	t.Run("missing target", func(t *testing.T) {
		f := &fakeTarget{name: "management"}
		p := planOf(entry("management", "ns", "a", contract.ActionCreate), entry("guest", "", "b", contract.ActionCreate))
		_, err := ApplyPlan(ctx, p, map[string]Target{"management": f})
		if err == nil || !strings.Contains(err.Error(), `"guest"`) || len(f.applied) != 0 {
			t.Errorf("err %v, applied %v", err, f.applied)
		}
	})
	t.Run("dry-run failure writes nothing", func(t *testing.T) {
		f := &fakeTarget{name: "management", fail: map[string]error{"c": errors.New("denied")}}
		p := planOf(entry("management", "ns", "a", contract.ActionCreate), entry("management", "ns", "b", contract.ActionCreate), entry("management", "ns", "c", contract.ActionCreate))
		res, err := ApplyPlan(ctx, p, map[string]Target{"management": f})
		if err == nil || len(f.applied) != 0 {
			t.Fatalf("err %v, applied %v", err, f.applied)
		}
		if res[0].Status != StatusNotRun || res[2].Status != StatusFailed {
			t.Errorf("statuses %s %s", res[0].Status, res[2].Status)
		}
	})
	t.Run("dependent entries are not dry-run", func(t *testing.T) {
		f := &fakeTarget{name: "cluster", fail: map[string]error{}}
		ns := entry("cluster", "", "new", contract.ActionCreate)
		ns.Mutation.Metadata.ResourceType.Resource = "namespaces"
		p := planOf(ns, entry("cluster", "new", "a", contract.ActionCreate), entry("cluster", "new", "a", contract.ActionUpdate))
		res, err := DryRun(ctx, p, map[string]Target{"cluster": f})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Change != ChangeCreate || res[1].Change != "" || res[2].Change != "" || res[2].Status != StatusValid {
			t.Errorf("results %+v", res)
		}
	})
	t.Run("entries in a namespace that is already there are asked before any write", func(t *testing.T) {
		// The Namespace entry finds its object: the entries in it do not wait for its
		// write, and the one that would fail is found before anything is written.
		f := &fakeTarget{name: "guest", exists: map[string]bool{"shared": true}, fail: map[string]error{"theirs": errors.New("conflict")}}
		ns := entry("guest", "", "shared", contract.ActionApply)
		ns.Mutation.Metadata.ResourceType.Resource = "namespaces"
		p := planOf(ns, entry("guest", "shared", "a", contract.ActionCreate), entry("guest", "shared", "theirs", contract.ActionApply), entry("guest", "shared", "z", contract.ActionCreate))
		res, err := ApplyPlan(ctx, p, map[string]Target{"guest": f})
		if err == nil || len(f.applied) != 0 {
			t.Fatalf("err %v, applied %v", err, f.applied)
		}
		if res[2].Status != StatusFailed {
			t.Errorf("the conflicting entry: %s, want %s", res[2].Status, StatusFailed)
		}
	})
	t.Run("writes objects before their status, namespaces first, deletions last", func(t *testing.T) {
		f := &fakeTarget{name: "cluster", fail: map[string]error{}}
		ns := entry("cluster", "", "new", contract.ActionCreate)
		ns.Mutation.Metadata.ResourceType.Resource = "namespaces"
		// The order of an output directory: actions sorted by folder name.
		p := planOf(
			entry("cluster", "new", "a", contract.ActionApplyStatus),
			entry("cluster", "new", "old", contract.ActionDelete),
			entry("cluster", "new", "a", contract.ActionCreate),
			ns,
		)
		res, err := ApplyPlan(ctx, p, map[string]Target{"cluster": f})
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, r := range res {
			order = append(order, string(r.Action)+" "+r.Identity.Name)
		}
		if got, want := strings.Join(order, ", "), "Create new, Create a, ApplyStatus a, Delete old"; got != want {
			t.Errorf("write order %s, want %s", got, want)
		}
		// Only the Namespace is independent of an earlier entry: the status write needs
		// the object the Create makes, and is validated without a server-side dry-run.
		if res[2].Status != StatusApplied || len(f.applied) != 4 {
			t.Errorf("results %+v, applied %v", res, f.applied)
		}
	})
	t.Run("a signal stops the plan after the entry in flight", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		f := &fakeTarget{name: "management"}
		ct := &cancelOnApply{fakeTarget: f, name: "b", cancel: cancel}
		p := planOf(entry("management", "ns", "a", contract.ActionCreate), entry("management", "ns", "b", contract.ActionCreate), entry("management", "ns", "c", contract.ActionCreate), entry("management", "ns", "d", contract.ActionCreate))
		res, err := ApplyPlan(ctx, p, map[string]Target{"management": ct})
		var ie *InterruptedError
		if !errors.As(err, &ie) {
			t.Fatalf("err = %v, want an *InterruptedError", err)
		}
		if ie.Written != 2 || ie.Done != 2 || ie.Total != 4 || ie.Next != 2 || ie.Cause.Error() != "SIGTERM" {
			t.Errorf("interrupted %+v", *ie)
		}
		if ct.writeCanceled {
			t.Error("the write in flight saw the signal: it must be finished, not cut off")
		}
		var got []string
		for _, r := range res {
			got = append(got, string(r.Status))
		}
		if want := "applied,applied,not-run,not-run"; strings.Join(got, ",") != want || strings.Join(f.applied, ",") != "a,b" {
			t.Errorf("statuses %v (want %s), applied %v", got, want, f.applied)
		}
		t.Log(err)
	})
	t.Run("applies in order, stops at the first failure", func(t *testing.T) {
		f := &fakeTarget{name: "management", skip: map[string]bool{"b": true}}
		p := planOf(entry("management", "ns", "a", contract.ActionCreate), entry("management", "ns", "b", contract.ActionCreate), entry("management", "ns", "c", contract.ActionCreate), entry("management", "ns", "d", contract.ActionCreate))
		// c fails only when written, after its dry-run passed.
		ft := &failOnApply{fakeTarget: f, name: "c"}
		res, err := ApplyPlan(ctx, p, map[string]Target{"management": ft})
		if err == nil {
			t.Fatal("want an error")
		}
		var got []Status
		for _, r := range res {
			got = append(got, r.Status)
		}
		want := []Status{StatusApplied, StatusSkipped, StatusFailed, StatusNotRun}
		if strings.Join(statusStrings(got), ",") != strings.Join(statusStrings(want), ",") {
			t.Errorf("statuses %v, want %v", got, want)
		}
		if strings.Join(f.applied, ",") != "a" {
			t.Errorf("applied %v", f.applied)
		}
	})
}

// cancelOnApply cancels the plan's context while the entry named name is being written (a
// signal during that write) and records whether that write's own context was canceled.
type cancelOnApply struct {
	*fakeTarget
	name          string
	cancel        context.CancelCauseFunc
	writeCanceled bool
}

func (c *cancelOnApply) Apply(ctx context.Context, m contract.Mutation) (Result, error) {
	if m.Metadata.Name == c.name {
		c.cancel(errors.New("SIGTERM"))
		c.writeCanceled = ctx.Err() != nil
	}
	return c.fakeTarget.Apply(ctx, m)
}

type failOnApply struct {
	*fakeTarget
	name string
}

func (f *failOnApply) Apply(ctx context.Context, m contract.Mutation) (Result, error) {
	if m.Metadata.Name == f.name {
		return Result{}, errors.New("boom")
	}
	return f.fakeTarget.Apply(ctx, m)
}

func statusStrings(s []Status) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}

func TestMoveFieldsPatch(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, sub, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", Subresource: sub, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	const data = `{"f:data":{"f:a":{}}}`
	const labels = `{"f:metadata":{"f:labels":{"f:x":{}}}}`
	for name, tc := range map[string]struct {
		entries  []metav1.ManagedFieldsEntry
		previous []string
		sub      string
		want     []metav1.ManagedFieldsEntry // nil: no patch
	}{
		"server-side apply moved": {
			entries:  []metav1.ManagedFieldsEntry{entry("authentication-operator", metav1.ManagedFieldsOperationApply, "", data)},
			previous: []string{"authentication-operator"},
			want:     []metav1.ManagedFieldsEntry{entry("sample", metav1.ManagedFieldsOperationApply, "", data)},
		},
		"client-side apply moved": {
			entries:  []metav1.ManagedFieldsEntry{entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, "", data)},
			previous: []string{"kubectl-client-side-apply"},
			want:     []metav1.ManagedFieldsEntry{entry("sample", metav1.ManagedFieldsOperationApply, "", data)},
		},
		"merged into the manager's own": {
			entries: []metav1.ManagedFieldsEntry{
				entry("sample", metav1.ManagedFieldsOperationApply, "", labels),
				entry("authentication-operator", metav1.ManagedFieldsOperationApply, "", data),
			},
			previous: []string{"authentication-operator"},
			want:     []metav1.ManagedFieldsEntry{entry("sample", metav1.ManagedFieldsOperationApply, "", `{"f:data":{"f:a":{}},"f:metadata":{"f:labels":{"f:x":{}}}}`)},
		},
		"other managers kept": {
			entries: []metav1.ManagedFieldsEntry{
				entry("authentication-operator", metav1.ManagedFieldsOperationApply, "", data),
				entry("someone", metav1.ManagedFieldsOperationApply, "", labels),
			},
			previous: []string{"authentication-operator"},
			want: []metav1.ManagedFieldsEntry{
				entry("sample", metav1.ManagedFieldsOperationApply, "", data),
				entry("someone", metav1.ManagedFieldsOperationApply, "", labels),
			},
		},
		"status entry left on an object write": {
			entries:  []metav1.ManagedFieldsEntry{entry("authentication-operator", metav1.ManagedFieldsOperationApply, "status", data)},
			previous: []string{"authentication-operator"},
		},
		"status entry moved on a status write": {
			entries:  []metav1.ManagedFieldsEntry{entry("authentication-operator", metav1.ManagedFieldsOperationApply, "status", data)},
			previous: []string{"authentication-operator"},
			sub:      "status",
			want:     []metav1.ManagedFieldsEntry{entry("sample", metav1.ManagedFieldsOperationApply, "status", data)},
		},
		"no previous manager present": {
			entries:  []metav1.ManagedFieldsEntry{entry("someone", metav1.ManagedFieldsOperationApply, "", data)},
			previous: []string{"authentication-operator"},
		},
		"no previous manager named": {
			entries: []metav1.ManagedFieldsEntry{entry("someone", metav1.ManagedFieldsOperationApply, "", data)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			live := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: ns\n  resourceVersion: \"7\"\n")
			live.SetManagedFields(tc.entries)
			patch, err := moveFieldsPatch(live, tc.previous, "sample", tc.sub)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if patch != nil {
					t.Fatalf("patch = %s, want none", patch)
				}
				return
			}
			var ops []struct {
				Op    string          `json:"op"`
				Path  string          `json:"path"`
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(patch, &ops); err != nil {
				t.Fatalf("patch %s: %v", patch, err)
			}
			var got []metav1.ManagedFieldsEntry
			rv := ""
			for _, op := range ops {
				switch op.Path {
				case "/metadata/managedFields":
					if err := json.Unmarshal(op.Value, &got); err != nil {
						t.Fatal(err)
					}
				case "/metadata/resourceVersion":
					_ = json.Unmarshal(op.Value, &rv)
				}
			}
			if rv != "7" {
				t.Errorf("resourceVersion in the patch = %q, want the live one", rv)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("managedFields = %+v, want %+v", got, tc.want)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Manager != w.Manager || g.Operation != w.Operation || g.Subresource != w.Subresource || !equalFields(t, g.FieldsV1.Raw, w.FieldsV1.Raw) {
					t.Errorf("entry %d = %s %s %q %s, want %s %s %q %s", i, g.Manager, g.Operation, g.Subresource, g.FieldsV1.Raw, w.Manager, w.Operation, w.Subresource, w.FieldsV1.Raw)
				}
			}
		})
	}
}

// equalFields compares two FieldsV1 documents as JSON.
func equalFields(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
