package contracttest

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/topolayer/topolayer/contract"
)

// ValidMutations returns the mutations of the small valid output directory: a Namespace, a
// ConfigMap, a Deployment, an event, a cluster-scoped ApplyStatus with options, a JSON
// patch, a merge patch and a generateName create.
func ValidMutations() []contract.Mutation {
	md := func(action contract.Action, group, version, resource, ns, name string) contract.Metadata {
		return contract.Metadata{
			Action:                 action,
			ControllerInstanceName: "sample-Controller",
			Name:                   name,
			Namespace:              ns,
			ResourceType:           contract.ResourceType{Group: group, Resource: resource, Version: version},
		}
	}
	apply := md(contract.ActionApplyStatus, "operator.openshift.io", "v1", "authentications", "", "cluster")
	apply.FieldManager = "sample-status"
	jsonPatch := md(contract.ActionPatchStatus, "operator.openshift.io", "v1", "authentications", "", "cluster")
	jsonPatch.PatchType = contract.PatchTypeJSON
	mergePatch := md(contract.ActionPatch, "", "v1", "configmaps", "openshift-sample", "settings")
	mergePatch.PatchType = contract.PatchTypeMerge
	csr := md(contract.ActionCreate, "certificates.k8s.io", "v1", "certificatesigningrequests", "", "")
	csr.GenerateName = "system:sample:client-"
	event := md(contract.ActionCreate, "", "v1", "events", "openshift-sample-operator", "sample.17fe72c59b829800.5bfc8f45")
	event.ControllerInstanceName = ""
	return []contract.Mutation{
		{Class: contract.ClassManagement, Metadata: md(contract.ActionCreate, "", "v1", "namespaces", "", "openshift-sample"),
			Body: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-sample\n")},
		{Class: contract.ClassManagement, Metadata: md(contract.ActionCreate, "", "v1", "configmaps", "openshift-sample", "settings"),
			Body: []byte("apiVersion: v1\ndata:\n  replicas: \"2\"\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: openshift-sample\n")},
		{Class: contract.ClassManagement, Metadata: md(contract.ActionCreate, "apps", "v1", "deployments", "openshift-sample", "sample"),
			Body: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sample\n  namespace: openshift-sample\nspec:\n  template:\n    spec:\n      serviceAccountName: sample\n      volumes:\n      - configMap:\n          name: settings\n        name: config\n")},
		{Class: contract.ClassManagement, Metadata: event,
			Body: []byte("apiVersion: v1\ninvolvedObject:\n  kind: Deployment\n  name: sample\n  namespace: openshift-sample\nkind: Event\nmetadata:\n  name: sample.17fe72c59b829800.5bfc8f45\n  namespace: openshift-sample-operator\nreason: Created\n")},
		{Class: contract.ClassManagement, Metadata: apply,
			Body:    []byte("apiVersion: operator.openshift.io/v1\nkind: Authentication\nmetadata:\n  name: cluster\nstatus:\n  readyReplicas: 1\n"),
			Options: []byte("fieldManager: sample-status\nforce: true\n")},
		{Class: contract.ClassManagement, Metadata: jsonPatch,
			Body: []byte("- op: remove\n  path: /status/conditions/0\n")},
		{Class: contract.ClassManagement, Metadata: mergePatch,
			Body: []byte(`{"data":{"message":"hello"}}`)},
		{Class: contract.ClassUserWorkload, Metadata: csr,
			Body: []byte("apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  generateName: 'system:sample:client-'\nspec:\n  signerName: kubernetes.io/kube-apiserver-client\n")},
	}
}

// ValidOutputResources declares exactly the mutations of ValidMutations.
func ValidOutputResources() *contract.OutputResources {
	id := func(group, resource, ns, name string) contract.ExactResourceID {
		return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: group, Version: "v1", Resource: resource}, Namespace: ns, Name: name}
	}
	return &contract.OutputResources{
		ManagementResources: contract.OutputResourceList{
			EventingNamespaces: []string{"openshift-sample-operator"},
			ExactResources: []contract.ExactResourceID{
				id("", "namespaces", "", "openshift-sample"),
				id("", "configmaps", "openshift-sample", "settings"),
				id("apps", "deployments", "openshift-sample", "sample"),
				id("operator.openshift.io", "authentications", "", "cluster"),
			},
		},
		UserWorkloadResources: contract.OutputResourceList{
			GeneratedNameResources: []contract.ExactResourceID{id("certificates.k8s.io", "certificatesigningrequests", "", "system:sample:client-")},
		},
	}
}

// WriteValidOutputDir writes the valid output directory into dir (absent or empty) and
// returns dir.
func WriteValidOutputDir(tb testing.TB, dir string) string {
	tb.Helper()
	out := &contract.OutputDir{
		HasControllerResults: true,
		ControllerResults: &contract.ControllerResults{ControllerResults: []contract.ControllerResult{
			{ControllerName: "sample-Controller", Status: contract.ControllerSucceeded},
		}},
		Mutations: ValidMutations(),
	}
	if err := contract.WriteOutputDir(dir, out, contract.WriteOptions{}); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Malformed is one malformed output directory.
type Malformed struct {
	// Name says what is wrong.
	Name string
	// Dir is the directory to read.
	Dir string
	// File is the path, relative to Dir, that the error must name.
	File string
	// Want is a fragment the error message must contain.
	Want string
	// Options are the read options the case needs (a small size limit, say).
	Options contract.ReadOptions
}

// Paths of files in the valid directory that the cases below corrupt.
const (
	cmDir       = "Management/Create/namespaces/openshift-sample/core/configmaps"
	deployDir   = "Management/Create/namespaces/openshift-sample/apps/deployments"
	authApplied = "Management/ApplyStatus/cluster-scoped-resources/operator.openshift.io/authentications"
	authPatched = "Management/PatchStatus/cluster-scoped-resources/operator.openshift.io/authentications"
	cmPatched   = "Management/Patch/namespaces/openshift-sample/core/configmaps"
)

// MalformedOutputDirs builds, under a fresh temporary directory, one copy of the valid
// directory per case, each broken in one way.
func MalformedOutputDirs(tb testing.TB) []Malformed {
	tb.Helper()
	base := tb.TempDir()
	outside := filepath.Join(base, "outside")
	must(tb, os.MkdirAll(outside, 0o755))
	must(tb, os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("apiVersion: v1\nkind: Secret\n"), 0o644))

	var cases []Malformed
	add := func(name, file, want string, opts contract.ReadOptions, breakIt func(dir string)) {
		dir := WriteValidOutputDir(tb, filepath.Join(base, strings.ReplaceAll(name, " ", "-")))
		breakIt(dir)
		cases = append(cases, Malformed{Name: name, Dir: dir, File: file, Want: want, Options: opts})
	}
	none := contract.ReadOptions{}
	cm := func(dir, kind string) string { return findFile(tb, filepath.Join(dir, cmDir), "-"+kind+"-") }

	add("truncated metadata", cmDir, "decode metadata", none, func(dir string) {
		must(tb, os.WriteFile(cm(dir, "metadata"), []byte("action: Create\nresourceType:\n  Group: \"co"), 0o644))
	})
	add("truncated body", cmDir, "decode body", none, func(dir string) {
		must(tb, os.WriteFile(cm(dir, "body"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [settings"), 0o644))
	})
	add("body without metadata", cmDir, "body file without a metadata file", none, func(dir string) {
		must(tb, os.Remove(cm(dir, "metadata")))
	})
	add("metadata without body", cmDir, "metadata file without a body file", none, func(dir string) {
		must(tb, os.Remove(cm(dir, "body")))
	})
	add("options without body", cmDir, "options file without body and metadata", none, func(dir string) {
		must(tb, os.WriteFile(filepath.Join(dir, cmDir, "ffff-options-other.yaml"), []byte("force: true\n"), 0o644))
	})
	add("unknown action folder", "Management/Frobnicate", "unknown action folder", none, func(dir string) {
		must(tb, os.Rename(filepath.Join(dir, "Management/Create"), filepath.Join(dir, "Management/Frobnicate")))
	})
	add("unknown class folder", "Elsewhere", "unexpected entry", none, func(dir string) {
		must(tb, os.Mkdir(filepath.Join(dir, "Elsewhere"), 0o755))
	})
	add("symlinked body leading out", cmDir, "symbolic links are not followed", none, func(dir string) {
		p := cm(dir, "body")
		must(tb, os.Remove(p))
		must(tb, os.Symlink(filepath.Join(outside, "secret.yaml"), p))
	})
	add("symlinked folder leading out", "Management/Create/namespaces/elsewhere", "symbolic links are not followed", none, func(dir string) {
		must(tb, os.Symlink(outside, filepath.Join(dir, "Management/Create/namespaces/elsewhere")))
	})
	add("dot-dot namespace in metadata", cmDir, `namespace: ".."`, none, func(dir string) {
		replaceIn(tb, cm(dir, "metadata"), "namespace: openshift-sample", "namespace: ..")
	})
	add("path in metadata name", deployDir, "may not contain '/'", none, func(dir string) {
		replaceIn(tb, findFile(tb, filepath.Join(dir, deployDir), "-metadata-"), "name: sample", "name: ../../../etc/passwd")
	})
	add("unreadable file: a named pipe", cmDir, "not a regular file", none, func(dir string) {
		p := cm(dir, "body")
		must(tb, os.Remove(p))
		must(tb, syscall.Mkfifo(p, 0o644))
	})
	add("a folder where a body should be", cmDir, "expected a file", none, func(dir string) {
		p := cm(dir, "body")
		must(tb, os.Remove(p))
		must(tb, os.Mkdir(p, 0o755))
	})
	add("oversized body", deployDir, "larger than the limit", contract.ReadOptions{MaxFileSize: 200}, func(string) {})
	add("oversized directory", "Management", "bytes in total", contract.ReadOptions{MaxTotalSize: 1000}, func(string) {})
	add("body kind contradicts its folder", cmDir, `kind: "Secret", but configmaps holds ConfigMap objects`, none, func(dir string) {
		replaceIn(tb, cm(dir, "body"), "kind: ConfigMap", "kind: Secret")
	})
	add("body group contradicts metadata", deployDir, `"v1" is not in group "apps"`, none, func(dir string) {
		replaceIn(tb, findFile(tb, filepath.Join(dir, deployDir), "-body-"), "apiVersion: apps/v1", "apiVersion: v1")
	})
	add("body name contradicts metadata", cmDir, "metadata.name", none, func(dir string) {
		replaceIn(tb, cm(dir, "body"), "name: settings", "name: other")
	})
	add("metadata action contradicts its folder", authApplied, "but the file is in the ApplyStatus folder", none, func(dir string) {
		replaceIn(tb, findFile(tb, filepath.Join(dir, authApplied), "-metadata-"), "action: ApplyStatus", "action: Apply")
	})
	add("file name contradicts metadata", cmDir, "the file name says", none, func(dir string) {
		for _, k := range []string{"body", "metadata"} {
			p := cm(dir, k)
			must(tb, os.Rename(p, strings.Replace(p, "-settings.yaml", "-other.yaml", 1)))
		}
	})
	add("unknown metadata key", cmDir, "unknown field", none, func(dir string) {
		p := cm(dir, "metadata")
		data, _ := os.ReadFile(p)
		must(tb, os.WriteFile(p, append(data, []byte("surprise: true\n")...), 0o644))
	})
	add("stray file in a resource folder", cmDir+"/README", "not a mutation file", none, func(dir string) {
		must(tb, os.WriteFile(filepath.Join(dir, cmDir, "README"), []byte("hello\n"), 0o644))
	})
	add("file directly under an action folder", "Management/Create/stray.yaml", "expected a directory", none, func(dir string) {
		must(tb, os.WriteFile(filepath.Join(dir, "Management/Create/stray.yaml"), []byte("{}\n"), 0o644))
	})
	add("JSON patch that is not a list", authPatched, "decode JSON patch", none, func(dir string) {
		must(tb, os.WriteFile(findFile(tb, filepath.Join(dir, authPatched), "-body-"), []byte("op: remove\n"), 0o644))
	})
	add("patch without a patch type", cmPatched, "patchType", none, func(dir string) {
		replaceIn(tb, findFile(tb, filepath.Join(dir, cmPatched), "-metadata-"), "patchType: application/merge-patch+json\n", "")
	})
	add("empty body", cmDir, "empty body", none, func(dir string) {
		must(tb, os.WriteFile(cm(dir, "body"), nil, 0o644))
	})
	add("bad controller results", contract.ControllerResultsFile, "is not Unknown, Succeeded", none, func(dir string) {
		must(tb, os.WriteFile(filepath.Join(dir, contract.ControllerResultsFile), []byte("controllerResults:\n- controllerName: x\n  status: Bogus\n"), 0o644))
	})
	add("binary garbage as metadata", cmDir, "decode metadata", none, func(dir string) {
		must(tb, os.WriteFile(cm(dir, "metadata"), []byte{0xff, 0xfe, 0x00, '\t', ':', '{', 0x01}, 0o644))
	})
	return cases
}

// findFile returns the one file in dir whose name contains fragment.
func findFile(tb testing.TB, dir, fragment string) string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	must(tb, err)
	for _, e := range entries {
		if strings.Contains(e.Name(), fragment) {
			return filepath.Join(dir, e.Name())
		}
	}
	tb.Fatalf("no file with %q in %s", fragment, dir)
	return ""
}

// replaceIn rewrites file p with its first from replaced by to.
func replaceIn(tb testing.TB, p, from, to string) {
	tb.Helper()
	data, err := os.ReadFile(p)
	must(tb, err)
	must(tb, os.WriteFile(p, []byte(strings.Replace(string(data), from, to, 1)), 0o644))
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// ReadTree returns every file below dir, by slash-separated relative path, with its content;
// an absent dir reads as empty. Tests compare whole directories with it.
func ReadTree(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	return files
}

// Bytes returns the body file a writer writes for m (contract.Mutation.Bytes): the operator's
// bytes, or a rewritten object written out.
func Bytes(tb testing.TB, m *contract.Mutation) []byte {
	tb.Helper()
	data, err := m.Bytes()
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// WriteFiles writes files, by slash-separated path relative to dir, with their content,
// making the folders they need.
func WriteFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		must(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		must(tb, os.WriteFile(p, []byte(content), 0o644))
	}
}

// ParseFile reads file and parses it with parse (contract.ParseOutputResources, ...),
// failing tb, with the file named, if either fails.
func ParseFile[T any](tb testing.TB, file string, parse func([]byte) (T, error)) T {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := parse(data)
	if err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	return v
}

// TempTree writes files, by slash-separated path relative to a fresh temporary directory of
// tb, with their content, and returns that directory.
func TempTree(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	WriteFiles(tb, dir, files)
	return dir
}

// CheckErr checks err against what a table case wants: an error containing want when want is
// not empty, no error when it is; otherwise it fails tb at once. It reports whether an error
// was wanted, so that the case can end there:
//
//	if contracttest.CheckErr(t, err, tc.wantErr) {
//		return
//	}
func CheckErr(tb testing.TB, err error, want string) (wanted bool) {
	tb.Helper()
	if want == "" {
		must(tb, err)
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		tb.Fatalf("error %v, want one containing %q", err, want)
	}
	return true
}

// ReadOutputDir reads the output directory dir with the default options, failing tb if it
// does not read.
func ReadOutputDir(tb testing.TB, dir string) *contract.OutputDir {
	tb.Helper()
	out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
	must(tb, err)
	return out
}

// ReadInputDir reads the input directory dir with the default options, failing tb if it does
// not read.
func ReadInputDir(tb testing.TB, dir string) *contract.InputDir {
	tb.Helper()
	in, err := contract.ReadInputDir(dir, contract.ReadOptions{})
	must(tb, err)
	return in
}

// RunWithOperators is a TestMain's run of m with the operator programs pkgs built once: it
// builds them as BuildOperators does, sets *binDir to their folder, runs m and removes the
// folder. It returns the exit code.
func RunWithOperators(m *testing.M, binDir *string, prefix string, pkgs ...string) int {
	dir, err := BuildOperators(prefix, pkgs...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build the test operators:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	*binDir = dir
	return m.Run()
}

// BuildOperators builds the Go operator programs pkgs (as the go command names them, relative
// to the test's package) into a new temporary directory whose name starts with prefix, for a
// TestMain that runs them as binaries; the caller removes the directory. The go command writes
// to os.Stdout and os.Stderr.
func BuildOperators(prefix string, pkgs ...string) (dir string, err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	build := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("go build %s: %w", strings.Join(pkgs, " "), err)
	}
	return dir, nil
}
