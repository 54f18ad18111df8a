package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// readmeLiveCommands returns the plan and apply commands of README.md's code blocks that
// ask live clusters (a --management-kubeconfig flag), continuation lines joined, in order.
func readmeLiveCommands(t *testing.T, readme string) []string {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inBlock, pending := false, ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "```") {
			inBlock, pending = !inBlock, ""
			continue
		}
		if !inBlock {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSpace(strings.TrimSuffix(line, "\\")) + " "
			continue
		}
		cmd := pending + line
		pending = ""
		f := strings.Fields(cmd)
		if len(f) > 1 && f[0] == "topolayer" && (f[1] == "plan" || f[1] == "apply") && strings.Contains(cmd, "--management-kubeconfig") {
			out = append(out, cmd)
		}
	}
	return out
}

// TestREADMELiveExample runs README.md's live example as a new user would: on a fresh
// `topolayer-devenv up` (hosted, examples/hosted.yaml), its plan --diff and its apply exit 0,
// and the apply writes every entry without a failure; applied again, it writes nothing.
func TestREADMELiveExample(t *testing.T) {
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeLiveCommands(t, filepath.Join(root, "README.md"))
	var plans, applies int
	for _, c := range commands {
		if strings.HasPrefix(c, "topolayer plan ") {
			plans++
		} else {
			applies++
		}
	}
	if plans == 0 || applies == 0 {
		t.Fatalf("README.md shows no live plan or apply against /tmp/dev: %q", commands)
	}
	bin := binary(t, "topolayer")
	dir := filepath.Join(t.TempDir(), "dev")
	env := append(os.Environ(), cluster.EnvAssets+"="+assetsDir)
	topolayer := func(args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = root, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	devenv := func(args ...string) (string, string, error) {
		cmd := exec.Command(binary(t, "topolayer-devenv"), args...)
		cmd.Dir, cmd.Env = root, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	down := func() {
		if _, err := os.Stat(dir); err == nil {
			if out, errOut, err := devenv("down", "--dir", dir); err != nil {
				t.Errorf("devenv down: %v\n%s%s", err, out, errOut)
			}
		}
	}
	t.Cleanup(down)
	onInterrupt(t, down)
	if out, errOut, err := devenv("up", "--dir", dir, "--config", filepath.Join("examples", "hosted.yaml")); err != nil {
		t.Fatalf("devenv up: %v\n%s%s", err, out, errOut)
	}
	run := func(c string) string {
		t.Helper()
		args := strings.Fields(strings.ReplaceAll(c, "/tmp/dev/", dir+"/"))[1:]
		out, errOut, err := topolayer(args...)
		if err != nil {
			t.Fatalf("README.md: %s: %v\n%s%s", c, err, out, errOut)
		}
		return out
	}
	for _, c := range commands {
		out := run(c)
		if strings.HasPrefix(c, "topolayer apply ") && !strings.Contains(out, " 0 failed, 0 not run") {
			t.Errorf("README.md: %s: not every entry was applied:\n%s", c, out)
		}
		if strings.HasPrefix(c, "topolayer plan ") && !strings.Contains(out, " 0 fail") {
			t.Errorf("README.md: %s: the live dry-run refuses an entry:\n%s", c, out)
		}
	}
	for _, c := range commands {
		if strings.HasPrefix(c, "topolayer apply ") {
			if out := run(c); !strings.Contains(out, " 0 applied, ") {
				t.Errorf("README.md: %s, applied again, wrote something:\n%s", c, out)
			}
		}
	}
}
