package contract_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// inputObject builds an InputObject the way a cache hands it over: group, resource and
// namespace beside the object.
func inputObject(group, resource, apiVersion, kind, ns, name string, lbls map[string]string) *contract.InputObject {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace(ns)
	if lbls != nil {
		u.SetLabels(lbls)
	}
	if kind == "ConfigMap" {
		u.Object["data"] = map[string]any{"key": "value of " + name}
	}
	return &contract.InputObject{Group: group, Resource: resource, Namespace: ns, Object: u}
}

// newInputObjects is a set of inputs of every shape an input directory holds: cluster-scoped
// objects of two groups, namespaced objects of two kinds in two namespaces (one named with
// the other as its prefix, and groups "apps" and "apps.openshift.io", so that a file order
// by whole paths and one by directory entries would differ), and a Namespace object. The
// objects are given unsorted.
func newInputObjects() []*contract.InputObject {
	app := map[string]string{"app": "sample"}
	return []*contract.InputObject{
		inputObject("", "configmaps", "v1", "ConfigMap", "openshift-config", "zeta", nil),
		inputObject("config.openshift.io", "infrastructures", "config.openshift.io/v1", "Infrastructure", "", "cluster", nil),
		inputObject("", "configmaps", "v1", "ConfigMap", "openshift-config-managed", "managed", app),
		inputObject("", "namespaces", "v1", "Namespace", "", "openshift-config", app),
		inputObject("", "configmaps", "v1", "ConfigMap", "openshift-config", "alpha", app),
		inputObject("apps.openshift.io", "deploymentconfigs", "apps.openshift.io/v1", "DeploymentConfig", "openshift-config", "legacy", nil),
		inputObject("apps", "deployments", "apps/v1", "Deployment", "openshift-config", "sample", app),
		inputObject("operator.openshift.io", "authentications", "operator.openshift.io/v1", "Authentication", "", "cluster", nil),
	}
}

// TestNewInputDirAnswersAsReadInputDir checks that the in-memory directory is the one
// ReadInputDir reads from what WriteInputDir writes of the same objects: the same objects in
// the same files and order, the same GET and LIST answers.
func TestNewInputDirAnswersAsReadInputDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "in")
	if err := contract.WriteInputDir(dir, newInputObjects()); err != nil {
		t.Fatal(err)
	}
	want := contracttest.ReadInputDir(t, dir)
	got, err := contract.NewInputDir(newInputObjects(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Objects()) != len(newInputObjects()) {
		t.Fatalf("NewInputDir holds %d objects, want %d", len(got.Objects()), len(newInputObjects()))
	}
	if diff := cmp.Diff(want.Objects(), got.Objects()); diff != "" {
		t.Errorf("Objects() (-ReadInputDir +NewInputDir):\n%s", diff)
	}
	if got.Discovery == nil || got.Discovery.Len() != want.Discovery.Len() || got.HasDiscovery {
		t.Errorf("discovery: %d resources (HasDiscovery %v), want the default's %d", got.Discovery.Len(), got.HasDiscovery, want.Discovery.Len())
	}

	gvr := func(group, version, resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
	}
	cms := gvr("", "v1", "configmaps")
	for _, tc := range []struct {
		name     string
		gvr      schema.GroupVersionResource
		ns, obj  string
		notFound bool
		wrongVer bool
	}{
		{name: "list item", gvr: cms, ns: "openshift-config", obj: "alpha"},
		{name: "list item in the other namespace", gvr: cms, ns: "openshift-config-managed", obj: "managed"},
		{name: "second kind", gvr: gvr("apps", "v1", "deployments"), ns: "openshift-config", obj: "sample"},
		{name: "cluster-scoped", gvr: gvr("config.openshift.io", "v1", "infrastructures"), obj: "cluster"},
		{name: "namespace object", gvr: gvr("", "v1", "namespaces"), obj: "openshift-config"},
		{name: "namespace never written", gvr: gvr("", "v1", "namespaces"), obj: "openshift-config-managed", notFound: true},
		{name: "wrong namespace", gvr: cms, ns: "openshift-config-managed", obj: "alpha", notFound: true},
		{name: "missing", gvr: cms, ns: "openshift-config", obj: "nope", notFound: true},
		{name: "wrong version", gvr: gvr("apps", "v1beta1", "deployments"), ns: "openshift-config", obj: "sample", wrongVer: true},
	} {
		t.Run("Get "+tc.name, func(t *testing.T) {
			wantObj, wantErr := want.Get(tc.gvr, tc.ns, tc.obj)
			gotObj, gotErr := got.Get(tc.gvr, tc.ns, tc.obj)
			switch {
			case tc.notFound:
				if !apierrors.IsNotFound(wantErr) || !apierrors.IsNotFound(gotErr) {
					t.Fatalf("want NotFound from both, got %v (read) and %v (in memory)", wantErr, gotErr)
				}
			case tc.wrongVer:
				if !apierrors.IsInternalError(wantErr) || !apierrors.IsInternalError(gotErr) {
					t.Fatalf("want an internal error from both, got %v (read) and %v (in memory)", wantErr, gotErr)
				}
			case wantErr != nil || gotErr != nil:
				t.Fatalf("Get: %v (read), %v (in memory)", wantErr, gotErr)
			default:
				if gotObj.GetName() != tc.obj {
					t.Fatalf("Get returned %q", gotObj.GetName())
				}
				if diff := cmp.Diff(wantObj, gotObj); diff != "" {
					t.Errorf("Get (-ReadInputDir +NewInputDir):\n%s", diff)
				}
			}
		})
	}

	app := labels.SelectorFromSet(labels.Set{"app": "sample"})
	for _, tc := range []struct {
		name string
		gvr  schema.GroupVersionResource
		ns   string
		sel  labels.Selector
		n    int
	}{
		{name: "configmaps everywhere", gvr: cms, n: 3},
		{name: "configmaps of one namespace", gvr: cms, ns: "openshift-config", n: 2},
		{name: "configmaps of the namespace named as a prefix of the other", gvr: cms, ns: "openshift-config-managed", n: 1},
		{name: "configmaps by label", gvr: cms, sel: app, n: 2},
		{name: "deployments", gvr: gvr("apps", "v1", "deployments"), n: 1},
		{name: "cluster-scoped", gvr: gvr("operator.openshift.io", "v1", "authentications"), n: 1},
		{name: "namespaces", gvr: gvr("", "v1", "namespaces"), n: 1},
		{name: "namespaces by another label", gvr: gvr("", "v1", "namespaces"), sel: labels.SelectorFromSet(labels.Set{"app": "other"}), n: 0},
		{name: "a resource with no objects", gvr: gvr("", "v1", "secrets"), n: 0},
	} {
		t.Run("List "+tc.name, func(t *testing.T) {
			wantList, gotList := want.List(tc.gvr, tc.ns, tc.sel), got.List(tc.gvr, tc.ns, tc.sel)
			if len(gotList) != tc.n {
				t.Errorf("NewInputDir lists %d objects, want %d", len(gotList), tc.n)
			}
			if diff := cmp.Diff(wantList, gotList); diff != "" {
				t.Errorf("List (-ReadInputDir +NewInputDir):\n%s", diff)
			}
		})
	}
}

// TestNewInputDirCopies checks that the directory holds copies: changing the objects given
// to NewInputDir afterwards changes nothing it answers.
func TestNewInputDirCopies(t *testing.T) {
	objs := newInputObjects()
	d, err := contract.NewInputDir(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := d.List(configmaps, "", nil)
	for _, o := range objs {
		o.Object.SetLabels(map[string]string{"changed": "yes"})
		o.Object.Object["data"] = map[string]any{"key": "changed"}
		o.Namespace = "elsewhere"
	}
	after := d.List(configmaps, "", nil)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("changing the inputs changed the directory (-before +after):\n%s", diff)
	}
	got, err := d.Get(configmaps, "openshift-config", "alpha")
	if err != nil {
		t.Fatalf("Get after changing the inputs: %v", err)
	}
	if got.GetLabels()["changed"] != "" || got.Object["data"].(map[string]any)["key"] != "value of alpha" {
		t.Errorf("Get returns the changed input: %v", got.Object)
	}
	for _, o := range d.Objects() {
		if o.Namespace == "elsewhere" || o.Object.GetLabels()["changed"] != "" {
			t.Errorf("Objects() holds a changed input: %s", o.Identity())
		}
	}
}

func TestNewInputDirRefusesInvalidObjects(t *testing.T) {
	for _, tc := range []struct {
		name      string
		objs      func() []*contract.InputObject
		want      string // a fragment of the error
		malformed bool   // the error is a *FileError naming the list file
		file      string
	}{
		{
			name: "object without a name",
			objs: func() []*contract.InputObject {
				return []*contract.InputObject{inputObject("", "configmaps", "v1", "ConfigMap", "ns", "", nil)}
			},
			want: "name or generateName is required",
		},
		{
			name: "two apiVersions in one list",
			objs: func() []*contract.InputObject {
				return []*contract.InputObject{
					inputObject("apps", "deployments", "apps/v1", "Deployment", "ns", "a", nil),
					inputObject("apps", "deployments", "apps/v1beta1", "Deployment", "ns", "b", nil),
				}
			},
			want: "apps/v1beta1 Deployment in a list of apps/v1 Deployment",
		},
		{
			name: "apiVersion outside the object's group",
			objs: func() []*contract.InputObject {
				return []*contract.InputObject{inputObject("apps", "deployments", "v1", "Deployment", "ns", "a", nil)}
			},
			want: `"v1" is not in the folder's group "apps"`, malformed: true, file: "namespaces/ns/apps/deployments.yaml",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := contract.NewInputDir(tc.objs(), nil)
			if err == nil {
				t.Fatalf("no error; the directory holds %d objects", len(d.Objects()))
			}
			if d != nil {
				t.Errorf("a directory beside the error")
			}
			if !containsAll(err.Error(), tc.want) {
				t.Errorf("error should say %q:\n%v", tc.want, err)
			}
			var fe *contract.FileError
			if tc.malformed && (!errors.As(err, &fe) || fe.File != tc.file || !errors.Is(err, contract.ErrMalformed)) {
				t.Errorf("error %v: want a malformed *FileError naming %s", err, tc.file)
			}
		})
	}
}
