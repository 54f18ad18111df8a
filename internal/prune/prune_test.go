package prune_test

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/prune"
)

// operatorsEnv names the directory of the unpacked real operator binaries, the upstream
// multi-operator-manager among them (.ci/run unpacks ../shared/operators there).
const operatorsEnv = "TOPOLAYER_OPERATORS"

// TestCorpus prunes the upstream pruner's four test cases and compares every file byte for
// byte with what the upstream pruner writes for the case's expected-output: the same files,
// and each file's bytes those of its content as upstream serializes it (several expected
// files were reformatted by hand upstream, whose own test compares parsed content; the
// files upstream's pruner writes are canonical sigs.k8s.io/yaml). When TOPOLAYER_OPERATORS is
// set, the upstream binary is run too and its output must be identical to ours.
func TestCorpus(t *testing.T) {
	upstream := upstreamBinary(t)
	for _, c := range corpus.PruneCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			got := pruneCase(t, c.InputResources, c.MustGather)
			want := readTree(t, c.ExpectedOutput)
			if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))); diff != "" {
				t.Fatalf("files (-want +got):\n%s", diff)
			}
			for p, data := range want {
				canonical := canonicalYAML(t, filepath.Join(c.ExpectedOutput, p), data)
				if !bytes.Equal(got[p], canonical) {
					t.Errorf("%s (-want +got):\n%s", p, cmp.Diff(string(canonical), string(got[p])))
				}
			}
			compareUpstream(t, upstream, c.InputResources, c.MustGather, got)
		})
	}
}

// pruneCase prunes one must-gather and returns the files Write wrote, by relative path.
func pruneCase(t *testing.T, inputResources, mustGather string) map[string][]byte {
	t.Helper()
	in, err := contract.ReadInputDir(mustGather, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return prunedFiles(t, inputResources, contract.ParseInputResources, in)
}

// prunedFiles prunes in to what the input-resources file declares (read by parse), and
// returns the files Write wrote, by relative path.
func prunedFiles(t *testing.T, inputResources string, parse func([]byte) (*contract.InputResources, error), in *contract.InputDir) map[string][]byte {
	t.Helper()
	declared := contracttest.ParseFile(t, inputResources, parse)
	lists, err := prune.Prune(in, declared.ApplyConfigurationResources)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := prune.Write(out, lists); err != nil {
		t.Fatal(err)
	}
	return readTree(t, out)
}

// canonicalYAML is data as sigs.k8s.io/yaml writes its content, which is how the upstream
// pruner writes every file.
func canonicalYAML(t *testing.T, file string, data []byte) []byte {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return out
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// compareUpstream runs the upstream pruner (upstream; nothing when "") on the must-gather
// mustGather and fails t unless it writes got, byte for byte.
func compareUpstream(t *testing.T, upstream, inputResources, mustGather string, got map[string][]byte) {
	t.Helper()
	if upstream == "" {
		return
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(upstream, "create-input-resources", "from-must-gather",
		"--input-resources", inputResources, "--must-gather-dir", mustGather, "--output-dir", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("upstream pruner: %v\n%s", err, b)
	}
	if diff := cmp.Diff(readTree(t, out), got); diff != "" {
		t.Errorf("upstream pruner's output (-upstream +topolayer):\n%s", diff)
	}
}

// upstreamBinary unpacks the upstream multi-operator-manager from TOPOLAYER_OPERATORS into
// the repository's cache folder, or returns "" when the variable is unset.
func upstreamBinary(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(operatorsEnv)
	if dir == "" {
		t.Logf("%s is not set: comparing with the corpus's expected output only, not with the upstream binary", operatorsEnv)
		return ""
	}
	bin := filepath.Join(dir, "multi-operator-manager")
	if _, err := os.Stat(bin); err != nil {
		t.Logf("%s=%s holds no multi-operator-manager (%v): comparing with the corpus's expected output only", operatorsEnv, dir, err)
		return ""
	}
	return bin
}
