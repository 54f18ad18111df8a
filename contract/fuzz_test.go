package contract_test

import (
	"os"
	"path"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// FuzzParseMetadata: any bytes parse or fail without panicking, and whatever parses is
// written back and parsed again to the same value.
func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte("action: Create\ncontrollerInstanceName: c\ngenerateName: \"\"\nname: n\nnamespace: ns\nresourceType:\n  Group: \"\"\n  Resource: configmaps\n  Version: v1\n"))
	f.Add([]byte("action: PatchStatus\ncontrollerInstanceName: c\ngenerateName: \"\"\nmame: cluster\npatchType: application/json-patch+json\nresourceType:\n  Group: operator.openshift.io\n  Resource: authentications\n  Version: v1\n"))
	f.Add([]byte("action: Create\ncontrollerInstanceName: \"\"\ngenerateName: 'system:x:'\nname: \"\"\nresourceType: {Group: certificates.k8s.io, Resource: certificatesigningrequests, Version: v1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := contract.ParseMetadata(data)
		if err != nil {
			return
		}
		out, err := contract.MarshalMetadata(m, m.NameKey)
		if err != nil {
			t.Fatalf("parsed metadata does not marshal: %v", err)
		}
		again, err := contract.ParseMetadata(out)
		if err != nil {
			t.Fatalf("written metadata does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("round trip changed the metadata: %+v -> %+v", m, again)
		}
	})
}

// materialize writes content at rel below dir, through an os.Root so that no fuzzed path
// leaves dir; paths that cannot be written are ignored.
func materialize(dir, rel string, content []byte) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return
	}
	defer root.Close()
	if rel == "" || len(rel) > 512 {
		return
	}
	_ = root.MkdirAll(path.Dir(rel), 0o755)
	_ = root.WriteFile(rel, content, 0o644)
}

// FuzzReadOutputDir starts from a valid output directory and writes two fuzzed files into it.
// The reader must not panic; when it accepts the directory, writing it back and reading again
// must give the same mutations.
func FuzzReadOutputDir(f *testing.F) {
	f.Add("Management/Create/namespaces/openshift-sample/core/configmaps/aaaa-body-x.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: openshift-sample\n"),
		"Management/Create/namespaces/openshift-sample/core/configmaps/aaaa-metadata-x.yaml", []byte("action: Create\ncontrollerInstanceName: c\ngenerateName: \"\"\nname: x\nnamespace: openshift-sample\nresourceType:\n  Group: \"\"\n  Resource: configmaps\n  Version: v1\n"))
	f.Add("controller-results.yaml", []byte("null\n"), "Unspecified/Delete/cluster-scoped-resources/core/nodes/0001-body-n.yaml", []byte("kind: DeleteOptions\n"))
	f.Add("Configuration/Apply/x", []byte("{"), "../escape.yaml", []byte("a: b"))
	f.Fuzz(func(t *testing.T, name1 string, data1 []byte, name2 string, data2 []byte) {
		dir := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "out"))
		materialize(dir, name1, data1)
		materialize(dir, name2, data2)
		out, err := contract.ReadOutputDir(dir, contract.ReadOptions{MaxFileSize: 1 << 16})
		if err != nil {
			return
		}
		back := filepath.Join(t.TempDir(), "back")
		if err := contract.WriteOutputDir(back, out, contract.WriteOptions{}); err != nil {
			t.Fatalf("an accepted directory does not write back: %v", err)
		}
		again, err := contract.ReadOutputDir(back, contract.ReadOptions{MaxFileSize: 1 << 16})
		if err != nil {
			t.Fatalf("a written directory does not read back: %v", err)
		}
		if len(again.Mutations) != len(out.Mutations) {
			t.Fatalf("read %d mutations, wrote and read back %d", len(out.Mutations), len(again.Mutations))
		}
		for i := range out.Mutations {
			a, b := out.Mutations[i], again.Mutations[i]
			a.Metadata.NameKey, b.Metadata.NameKey = "", ""
			a.Path, b.Path = "", ""
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("mutation %d changed: %+v -> %+v", i, a, b)
			}
		}
	})
}

// FuzzReadInputDir starts from a valid input directory and writes two fuzzed files into it.
// The reader must not panic, and every object it accepts must be found again by Get.
func FuzzReadInputDir(f *testing.F) {
	f.Add("namespaces/openshift-config/core/configmaps.yaml", []byte("apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: openshift-config, labels: {x: y}}\n"),
		"cluster-scoped-resources/config.openshift.io/infrastructures/cluster.yaml", []byte("apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata:\n  name: cluster\n"))
	f.Add("namespaces/x/x.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"), "aggregated-discovery-apis.yaml", []byte("items: []\n"))
	f.Add("namespaces/openshift-config/core/secrets/s.json", []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"openshift-config"}}`), "cluster-scoped-resources/core", []byte("---\n"))
	f.Fuzz(func(t *testing.T, name1 string, data1 []byte, name2 string, data2 []byte) {
		dir := filepath.Join(t.TempDir(), "in")
		writeValidInputDir(t, dir)
		materialize(dir, name1, data1)
		materialize(dir, name2, data2)
		in, err := contract.ReadInputDir(dir, contract.ReadOptions{MaxFileSize: 1 << 16})
		if err != nil {
			return
		}
		for _, o := range in.Objects() {
			id := o.Identity()
			if _, err := in.Get(id.GroupVersionResource(), id.Namespace, id.Name); err != nil {
				t.Fatalf("%s: accepted object %s not found by Get: %v", o.File, id, err)
			}
		}
	})
}

// writeValidInputDir writes a small input directory in both forms.
func writeValidInputDir(t testing.TB, dir string) {
	t.Helper()
	files := map[string]string{
		"namespaces/openshift-config/openshift-config.yaml":                         "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-config\n",
		"namespaces/openshift-config/core/configmaps.yaml":                          "---\napiVersion: v1\nkind: ConfigMapList\nmetadata: {}\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: sample-settings\n    namespace: openshift-config\n    labels:\n      app: sample\n  data:\n    replicas: \"2\"\n",
		"namespaces/openshift-config/core/secrets/pull-secret.yaml":                 "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pull-secret\n  namespace: openshift-config\n",
		"cluster-scoped-resources/config.openshift.io/infrastructures/cluster.yaml": "apiVersion: config.openshift.io/v1\nkind: Infrastructure\nmetadata:\n  name: cluster\nspec: {}\n",
		"cluster-scoped-resources/operator.openshift.io/authentications.yaml":       "apiVersion: operator.openshift.io/v1\nkind: AuthenticationList\nitems:\n- apiVersion: operator.openshift.io/v1\n  kind: Authentication\n  metadata:\n    name: cluster\n",
	}
	contracttest.WriteFiles(t, dir, files)
}
