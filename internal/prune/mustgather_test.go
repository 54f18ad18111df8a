package prune_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/prune"
)

// imageDir is the folder `oc adm must-gather` writes the must-gather of one image into.
const imageDir = "quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-0123abcd"

// ocAdmMustGather lays the input directory in out as `oc adm must-gather` writes a
// must-gather: in a folder named after the image, beside timestamp, event-filter.html and
// must-gather.logs, with a version file, node logs and, for every namespace, its pods' logs
// under pods/. It returns the wrapping directory and the image folder.
func ocAdmMustGather(t *testing.T, input, out string) (wrapper, image string) {
	t.Helper()
	image = filepath.Join(out, imageDir)
	if err := os.CopyFS(image, os.DirFS(input)); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"timestamp":                                  "2026-11-27 16:00:00.000000000 +0000 UTC m=+0.05\n",
		"event-filter.html":                          "<html><body>events</body></html>\n",
		"must-gather.logs":                           "[must-gather] OUT pod for plug-in image created\n",
		filepath.Join(imageDir, "timestamp"):         "2026-11-27 16:00:01\n",
		filepath.Join(imageDir, "event-filter.html"): "<html></html>\n",
		filepath.Join(imageDir, "version"):           "oc 4.20\n",
		filepath.Join(imageDir, "host_service_logs", "masters", "kubelet_service.log"): "kubelet log\n",
	}
	namespaces, _ := os.ReadDir(filepath.Join(image, "namespaces"))
	for _, ns := range namespaces {
		pod := filepath.Join(imageDir, "namespaces", ns.Name(), "pods", "p-1")
		files[filepath.Join(pod, "p-1.yaml")] = "apiVersion: v1\nkind: Pod\nmetadata: {name: p-1, namespace: " + ns.Name() + "}\n"
		files[filepath.Join(pod, "c", "c", "logs", "current.log")] = "log line\n"
		files[filepath.Join(pod, "c", "c", "logs", "previous.log")] = ""
	}
	for rel, data := range files {
		p := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out, image
}

// TestOcAdmMustGather prunes the upstream pruner's cases laid out as `oc adm must-gather`
// writes them: the output is that of the plain input directory, whether --from names the
// must-gather or its image folder, and, when TOPOLAYER_OPERATORS is set, byte for byte what
// upstream's pruner writes from the image folder.
func TestOcAdmMustGather(t *testing.T) {
	upstream := upstreamBinary(t)
	for _, c := range corpus.PruneCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			want := pruneCase(t, c.InputResources, c.MustGather)
			wrapper, image := ocAdmMustGather(t, c.MustGather, t.TempDir())
			for _, from := range []string{wrapper, image} {
				got := pruneMustGather(t, c.InputResources, from)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("--from %s (-input-dir +must-gather):\n%s", from, diff)
				}
			}
			if upstream != "" {
				compareUpstream(t, upstream, c.InputResources, image, pruneMustGather(t, c.InputResources, image))
			}
		})
	}
}

// pruneMustGather prunes the must-gather at from (the wrapper or its image folder) as
// `topolayer prune --from` does, and returns the files Write wrote, by relative path.
func pruneMustGather(t *testing.T, inputResources, from string) map[string][]byte {
	t.Helper()
	mg, err := prune.ReadMustGather(from, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return prunedFiles(t, inputResources, prune.ParseInputResources, mg.Input)
}

func TestReadMustGatherIgnored(t *testing.T) {
	dir := contracttest.TempTree(t, map[string]string{
		imageDir + "/namespaces/a/a.yaml":                              "{apiVersion: v1, kind: Namespace, metadata: {name: a}}",
		imageDir + "/namespaces/a/core/configmaps.yaml":                "{apiVersion: v1, kind: ConfigMapList, items: []}",
		imageDir + "/namespaces/a/core/notes.txt":                      "not a resource",
		imageDir + "/namespaces/a/pods/p/c/c/logs/current.log":         "log",
		imageDir + "/cluster-scoped-resources/core/nodes/node1.yaml":   "{apiVersion: v1, kind: Node, metadata: {name: node1}}",
		imageDir + "/cluster-scoped-resources/core/nodes/node1/x.yaml": "deeper than an object file",
		imageDir + "/timestamp":                                        "t",
		"event-filter.html":                                            "<html/>",
	})
	mg, err := prune.ReadMustGather(dir, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"event-filter.html",
		imageDir + "/cluster-scoped-resources/core/nodes/node1/",
		imageDir + "/namespaces/a/core/notes.txt",
		imageDir + "/namespaces/a/pods/",
		imageDir + "/timestamp",
	}
	if diff := cmp.Diff(want, mg.Ignored); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
	if mg.Root != filepath.Join(dir, imageDir) {
		t.Errorf("root %s", mg.Root)
	}

	// A resource file that cannot be read is refused, naming it in the must-gather.
	bad := contracttest.TempTree(t, map[string]string{"namespaces/a/core/configmaps.yaml": "{not: [yaml"})
	if _, err := prune.ReadMustGather(bad, contract.ReadOptions{}); err == nil || !contains(err.Error(), filepath.Join(bad, "namespaces")) {
		t.Errorf("error %v does not name the must-gather's file", err)
	}
	// Two image folders: which one is meant is not guessed.
	two := contracttest.TempTree(t, map[string]string{"a/namespaces/x/x.yaml": "{apiVersion: v1, kind: Namespace, metadata: {name: x}}", "b/namespaces/x/x.yaml": "{apiVersion: v1, kind: Namespace, metadata: {name: x}}"})
	if _, err := prune.ReadMustGather(two, contract.ReadOptions{}); err == nil || !contains(err.Error(), "2 must-gathers inside (a, b)") {
		t.Errorf("error %v", err)
	}
}

func TestParseInputResourcesMatchExpressions(t *testing.T) {
	doc := []byte(`applyConfigurationResources:
  labelSelectedResources:
  - {group: "", version: v1, resource: configmaps, namespace: a, labelSelector: {matchExpressions: [{key: app, operator: In, values: [x]}]}}
`)
	declared, err := prune.ParseInputResources(doc)
	if err != nil {
		t.Fatal(err)
	}
	in, err := contract.ReadInputDir(contracttest.TempTree(t, mustGather), contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lists, err := prune.Prune(in, declared.ApplyConfigurationResources)
	if err != nil || len(lists) != 1 || len(lists[0].Items) != 2 {
		t.Fatalf("lists %+v, err %v", lists, err)
	}
	if _, err := prune.ParseInputResources([]byte(`applyConfigurationResources: {labelSelectedResources: [{version: v1, resource: configmaps, labelSelector: {matchExpressions: [{key: app, operator: Bogus}]}}]}`)); err == nil {
		t.Error("an invalid expression is accepted")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
