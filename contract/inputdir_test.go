package contract_test

import (
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

var (
	configmaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets         = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	infrastructures = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "infrastructures"}
	nsResource      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

func TestInputDirGetAndList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "in")
	writeValidInputDir(t, dir)
	in := contracttest.ReadInputDir(t, dir)
	if in.HasDiscovery || in.Discovery.Len() == 0 {
		t.Fatalf("want the default discovery, got HasDiscovery=%v with %d resources", in.HasDiscovery, in.Discovery.Len())
	}
	for _, tc := range []struct {
		name         string
		gvr          schema.GroupVersionResource
		ns, obj      string
		wantNotFound bool
		wantErr      bool
	}{
		{name: "list item", gvr: configmaps, ns: "openshift-config", obj: "sample-settings"},
		{name: "per-object file", gvr: secrets, ns: "openshift-config", obj: "pull-secret"},
		{name: "cluster-scoped per-object", gvr: infrastructures, obj: "cluster"},
		{name: "namespace object", gvr: nsResource, obj: "openshift-config"},
		{name: "missing", gvr: configmaps, ns: "openshift-config", obj: "nope", wantNotFound: true},
		{name: "wrong namespace", gvr: configmaps, ns: "default", obj: "sample-settings", wantNotFound: true},
		{name: "wrong version", gvr: schema.GroupVersionResource{Group: "config.openshift.io", Version: "v2", Resource: "infrastructures"}, obj: "cluster", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := in.Get(tc.gvr, tc.ns, tc.obj)
			switch {
			case tc.wantNotFound:
				if !apierrors.IsNotFound(err) {
					t.Fatalf("want NotFound, got %v", err)
				}
			case tc.wantErr:
				if err == nil || apierrors.IsNotFound(err) {
					t.Fatalf("want a server error, got %v", err)
				}
			case err != nil:
				t.Fatal(err)
			case got.GetName() != tc.obj:
				t.Fatalf("got %s", got.GetName())
			}
		})
	}
	sel := labels.SelectorFromSet(labels.Set{"app": "sample"})
	if got := in.List(configmaps, "", sel); len(got) != 1 {
		t.Fatalf("label-selected list: %d objects", len(got))
	}
	if got := in.List(configmaps, "", labels.SelectorFromSet(labels.Set{"app": "other"})); len(got) != 0 {
		t.Fatalf("selector ignored: %d objects", len(got))
	}
	if got := in.List(nsResource, "", nil); len(got) != 1 || got[0].GetName() != "openshift-config" {
		t.Fatalf("namespaces: %v", got)
	}
}

// TestInputDirListFilesWinEverywhere checks the trap of spec §1.2: once any list file exists
// for a resource, per-object files of that resource are ignored by LIST in every namespace.
func TestInputDirListFilesWinEverywhere(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "in")
	writeValidInputDir(t, dir)
	contracttest.WriteFiles(t, dir, map[string]string{
		"namespaces/other/core/configmaps/lonely.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lonely\n  namespace: other\n",
	})
	in := contracttest.ReadInputDir(t, dir)
	if got := in.List(configmaps, "", nil); len(got) != 1 || got[0].GetName() != "sample-settings" {
		t.Fatalf("cluster-wide LIST must read list files only, got %d objects", len(got))
	}
	if _, err := in.Get(configmaps, "other", "lonely"); err != nil {
		t.Fatalf("GET still reads the per-object file: %v", err)
	}
}

func TestWriteInputDirRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "in")
	writeValidInputDir(t, dir)
	in := contracttest.ReadInputDir(t, dir)
	out := filepath.Join(t.TempDir(), "out")
	if err := contract.WriteInputDir(out, in.Objects()); err != nil {
		t.Fatal(err)
	}
	again := contracttest.ReadInputDir(t, out)
	if len(again.Objects()) != len(in.Objects()) {
		t.Fatalf("wrote %d objects, read back %d", len(in.Objects()), len(again.Objects()))
	}
	for _, o := range in.Objects() {
		id := o.Identity()
		got, err := again.Get(id.GroupVersionResource(), id.Namespace, id.Name)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if !equalObjects(got, o.Object) {
			t.Fatalf("%s changed:\n%v\n%v", id, got.Object, o.Object)
		}
	}
}

func equalObjects(a, b *unstructured.Unstructured) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
}

func TestMalformedInputDirs(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, want string
	}{
		{"list file holding one object", "namespaces/openshift-config/core/configmaps.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: openshift-config\n", "is not a list"},
		{"object in the wrong namespace folder", "namespaces/openshift-config/core/secrets/pull-secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pull-secret\n  namespace: default\n", "metadata.namespace"},
		{"object named unlike its file", "namespaces/openshift-config/core/secrets/pull-secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: other\n  namespace: openshift-config\n", "named for"},
		{"group unlike its folder", "cluster-scoped-resources/config.openshift.io/infrastructures/cluster.yaml", "apiVersion: v1\nkind: Infrastructure\nmetadata:\n  name: cluster\n", "folder's group"},
		{"truncated YAML", "cluster-scoped-resources/operator.openshift.io/authentications.yaml", "apiVersion: operator.openshift.io/v1\nkind: AuthenticationList\nitems:\n- {", "decode"},
		{"unexpected top-level file", "must-gather.log", "hello", "unexpected entry"},
		{"per-object file without a name", "namespaces/openshift-config/core/secrets/pull-secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  namespace: openshift-config\n", "metadata.name"},
		{"broken discovery", "aggregated-discovery-apis.yaml", "items: [", "discovery"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "in")
			writeValidInputDir(t, dir)
			contracttest.WriteFiles(t, dir, map[string]string{tc.file: tc.content})
			p := filepath.Join(dir, tc.file)
			_, err := contract.ReadInputDir(dir, contract.ReadOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !containsAll(msg, p, tc.want) {
				t.Fatalf("error should name %s and say %q:\n%s", tc.file, tc.want, msg)
			}
		})
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
