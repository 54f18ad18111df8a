package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
)

func TestPruneValidate(t *testing.T) {
	tests := []struct {
		name string
		o    PruneOptions
		want []string
	}{
		{"none", PruneOptions{}, []string{"--input-resources is required", "--from is required", "--to is required"}},
		{"same", PruneOptions{InputResourcesFile: "i", From: "d", To: "d"}, []string{"--to must not be --from"}},
		{"ok", PruneOptions{InputResourcesFile: "i", From: "m", To: "d"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.o.Validate(), tt.want) })
	}
}

// TestPruneCommand runs `topolayer prune` on a corpus case: it writes the case's files,
// refuses a non-empty --to without --overwrite and replaces it with it.
func TestPruneCommand(t *testing.T) {
	c := corpus.PruneCases(t)[0]
	to := filepath.Join(t.TempDir(), "pruned")
	stdout, _, err := run(t, "prune", "--input-resources", c.InputResources, "--from", c.MustGather, "--to", to)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "pruned ") {
		t.Errorf("stdout = %q", stdout)
	}
	err = filepath.WalkDir(c.ExpectedOutput, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(c.ExpectedOutput, p)
		if _, err := os.Stat(filepath.Join(to, rel)); err != nil {
			t.Errorf("%s: not written: %v", rel, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "prune", "--input-resources", c.InputResources, "--from", c.MustGather, "--to", to); err == nil || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("a non-empty --to was accepted: %v", err)
	}
	if _, _, err := run(t, "prune", "--input-resources", c.InputResources, "--from", c.MustGather, "--to", to, "--overwrite"); err != nil {
		t.Fatal(err)
	}
}

// TestPruneMalformed: broken inputs are errors naming the flag, the file and the field.
func TestPruneMalformed(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		writeFile(t, p, content, 0o644)
		return p
	}
	good := write("good.yaml", `applyConfigurationResources: {exactResources: [{group: "", version: v1, resource: configmaps, namespace: a, name: x}]}`)
	noVersion := write("noversion.yaml", `applyConfigurationResources: {exactResources: [{group: "", resource: configmaps, namespace: a, name: x}]}`)
	badPath := write("badpath.yaml", `applyConfigurationResources:
  resourceReferences:
  - type: ImplicitNamespacedReference
    referringResource: {group: "", version: v1, resource: configmaps, namespace: a, name: x}
    implicitNamespacedReference: {group: "", version: v1, resource: secrets, namespace: a, nameJSONPath: "$.["}`)
	mg := filepath.Join(dir, "mg")
	write("mg/namespaces/a/core/configmaps.yaml", "apiVersion: v1\nkind: ConfigMapList\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: a}}]\n")
	broken := filepath.Join(dir, "broken")
	brokenFile := write("broken/namespaces/a/core/configmaps.yaml", "apiVersion: v1\nkind: ConfigMapList\nitems: {not: a list\n")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"input-resources missing", []string{"--input-resources", filepath.Join(dir, "absent.yaml"), "--from", mg}, []string{"--input-resources", "absent.yaml"}},
		{"input-resources not YAML", []string{"--input-resources", brokenFile, "--from", mg}, []string{"--input-resources " + brokenFile}},
		{"input-resources field", []string{"--input-resources", noVersion, "--from", mg}, []string{noVersion, "applyConfigurationResources.exactResources[0].version"}},
		{"input-resources JSONPath", []string{"--input-resources", badPath, "--from", mg}, []string{badPath, "nameJSONPath"}},
		{"from missing", []string{"--input-resources", good, "--from", filepath.Join(dir, "absent")}, []string{"--from", "absent"}},
		{"from a file", []string{"--input-resources", good, "--from", good}, []string{"--from " + good + ": not a directory"}},
		{"from broken", []string{"--input-resources", good, "--from", broken}, []string{brokenFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			to := filepath.Join(t.TempDir(), "out")
			_, _, err := run(t, append([]string{"prune", "--to", to}, tt.args...)...)
			checkErr(t, err, tt.want)
			if _, err := os.Stat(to); err == nil {
				t.Errorf("--to was written")
			}
		})
	}
}

// TestPruneOcAdmMustGather prunes a must-gather laid out as `oc adm must-gather` writes it:
// what is not a resource is ignored and listed on stderr, each namespace's pod logs as one
// line.
func TestPruneOcAdmMustGather(t *testing.T) {
	mg := t.TempDir()
	image := filepath.Join(mg, "quay-io-image")
	files := map[string]string{
		"timestamp":                                              "t\n",
		"event-filter.html":                                      "<html/>\n",
		"quay-io-image/version":                                  "4.20\n",
		"quay-io-image/namespaces/a/a.yaml":                      "{apiVersion: v1, kind: Namespace, metadata: {name: a}}\n",
		"quay-io-image/namespaces/a/core/configmaps.yaml":        "{apiVersion: v1, kind: ConfigMapList, items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: a}}]}\n",
		"quay-io-image/namespaces/a/pods/p/c/c/logs/current.log": "log\n",
		"quay-io-image/namespaces/b/pods/p/c/c/logs/current.log": "log\n",
	}
	contracttest.WriteFiles(t, mg, files)
	ir := filepath.Join(t.TempDir(), "input-resources.yaml")
	if err := os.WriteFile(ir, []byte("applyConfigurationResources:\n  exactResources:\n  - {version: v1, resource: configmaps, namespace: a, name: c}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, stdout, stderr := runCLI(t, "prune", "--input-resources", ir, "--from", mg, "--to", filepath.Join(t.TempDir(), "out"))
	if status != cli.ExitOK || !strings.HasPrefix(stdout, "pruned 1 objects into 1 files") {
		t.Fatalf("status %d, stdout %q, stderr:\n%s", status, stdout, stderr)
	}
	for _, w := range []string{"reading the must-gather in " + image, "ignored 5 entries that are not resources:", "  event-filter.html\n", "  quay-io-image/namespaces/*/pods/ (2)\n", "  quay-io-image/version\n"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not contain %q:\n%s", w, stderr)
		}
	}
}
