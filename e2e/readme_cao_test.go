package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/syncbuf"
)

// shellBlocks returns the ```sh code blocks of a Markdown file by the "## " heading they
// follow, in order.
func shellBlocks(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var heading string
	var block *strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case block != nil && strings.HasPrefix(line, "```"):
			out[heading] = append(out[heading], block.String())
			block = nil
		case block != nil:
			block.WriteString(line + "\n")
		case line == "```sh":
			block = &strings.Builder{}
		case strings.HasPrefix(line, "## "):
			heading = strings.TrimPrefix(line, "## ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// walkThrough runs one README's shell blocks as a user would, in the repository's root,
// with the dev environment's directories under the test's own.
type walkThrough struct {
	t      *testing.T
	root   string
	env    []string
	dirs   *strings.Replacer
	readme string
	// running is the output of the block running in the background, if any.
	running *syncbuf.Buffer
}

// script is block as the test runs it: its directories replaced, and, when pause names a
// file, a pause before its `bin/topolayer run` line (the test looks at the clusters as they
// are just before topolayer runs, then removes the file), which is exec'd so that the
// process is topolayer's.
func (w *walkThrough) script(block, pause string) string {
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(w.dirs.Replace(block)), "\n") {
		if strings.HasPrefix(line, "bin/topolayer run ") {
			if pause != "" {
				lines = append(lines, "touch "+pause, "while [ -e "+pause+" ]; do sleep 0.1; done")
			}
			line = "exec " + line
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n") + "\n"
}

// sh runs block to its end and returns its output.
func (w *walkThrough) sh(block string) string {
	w.t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", w.script(block, ""))
	cmd.Dir, cmd.Env = w.root, w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		var running string
		if w.running != nil {
			running = "\nthe output of bin/topolayer run, running meanwhile:\n" + w.running.Tail(8000)
		}
		w.t.Fatalf("%s: %v; the block:\n%s\nits output:\n%s%s", w.readme, err, block, out, running)
	}
	return string(out)
}

// background starts block, which ends in `bin/topolayer run`, pauses it before that line
// and calls beforeRun, then lets it run. The returned function stops it as Ctrl-C does and
// checks that it stopped promptly and cleanly (run exits 0 when a signal stops it, see
// docs/cli.md).
func (w *walkThrough) background(block string, beforeRun func()) (stop func()) {
	t := w.t
	t.Helper()
	pause := filepath.Join(t.TempDir(), "pause")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", w.script(block, pause))
	cmd.Dir, cmd.Env = w.root, w.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	w.running = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	t.Cleanup(kill)
	onInterrupt(t, kill)
	if err := poll(t.Context(), 100*time.Millisecond, 10*time.Minute, func(context.Context) (bool, error) {
		select {
		case err := <-exited:
			return false, errors.New("the block ended before its bin/topolayer run: " + errString(err))
		default:
		}
		_, err := os.Stat(pause)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("%s: %v; the block:\n%s\nits output:\n%s", w.readme, err, block, out.String())
	}
	beforeRun()
	if err := os.Remove(pause); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		select {
		case err := <-exited:
			t.Fatalf("%s: bin/topolayer run ended by itself: %v\n%s", w.readme, err, out.String())
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("bin/topolayer run after Ctrl-C: %v, want exit status 0\n%s", err, out.String())
			}
		case <-time.After(30 * time.Second):
			kill()
			t.Errorf("bin/topolayer run did not stop within 30s of Ctrl-C\n%s", out.String())
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// TestCAOREADMEWalkThroughs runs the walk-throughs of
// examples/cluster-authentication-operator/README.md as written, with the real operator:
// hosted (the dev environment, the seeds, `topolayer run`, the commands of "another
// terminal", Ctrl-C), an identity provider added on the guest, then standalone in place of a resident
// operator (its objects adopted in place). Only the directories differ: /tmp/dev and
// /tmp/dev1 are the test's own.
func TestCAOREADMEWalkThroughs(t *testing.T) {
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "..", "shared", "operators", "unpack.sh")); err != nil {
		t.Skipf("the walk-throughs unpack the real operator from ../shared/operators: %v", err)
	}
	for _, tool := range []string{"kubectl", "openssl", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the walk-throughs run %s: %v", tool, err)
		}
	}
	readme := filepath.Join("examples", "cluster-authentication-operator", "README.md")
	blocks := shellBlocks(t, filepath.Join(root, readme))
	want := map[string]int{"Walk-through (hosted)": 2, "An identity provider": 1, "Standalone, in place of a resident operator": 2}
	for h, n := range want {
		if len(blocks[h]) != n {
			t.Fatalf("%s: section %q has %d shell blocks, want %d", readme, h, len(blocks[h]), n)
		}
	}
	tmp := t.TempDir()
	dev, dev1 := filepath.Join(tmp, "dev"), filepath.Join(tmp, "dev1")
	w := &walkThrough{
		t: t, root: root, readme: readme,
		env:  append(os.Environ(), cluster.EnvAssets+"="+assetsDir),
		dirs: strings.NewReplacer("/tmp/dev1", dev1, "/tmp/dev", dev),
	}
	for _, dir := range []string{dev, dev1} {
		down := func() {
			if _, err := os.Stat(dir); err == nil {
				cmd := exec.Command(filepath.Join(root, "bin", "topolayer-devenv"), "down", "--dir", dir)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("devenv down --dir %s: %v\n%s", dir, err, out)
				}
			}
		}
		t.Cleanup(down)
		onInterrupt(t, down)
	}

	t.Run("hosted", func(t *testing.T) {
		w.t = t
		start := time.Now()
		stop := w.background(blocks["Walk-through (hosted)"][0], func() {})
		out := w.sh(blocks["Walk-through (hosted)"][1])
		t.Logf("another terminal, %s after the start:\n%s", time.Since(start).Round(time.Second), out)
		for _, s := range []string{"deployment.apps/openshift-authentication--oauth-openshift", "operator: cluster-authentication-operator", "result: "} {
			if !strings.Contains(out, s) {
				t.Errorf("the commands of another terminal do not show %q", s)
			}
		}
		idp := time.Now()
		w.sh(blocks["An identity provider"][0])
		t.Logf("the identity provider's copy on the management cluster %s after the patch", time.Since(idp).Round(time.Second))
		stop()
	})

	t.Run("standalone", func(t *testing.T) {
		w.t = t
		residents := seedObjects(t, filepath.Join(root, "examples", "cluster-authentication-operator", "seed", "resident"))
		kubeconfig := filepath.Join(dev1, "cluster.kubeconfig")
		before := map[string]string{}
		var started time.Time
		stop := w.background(blocks["Standalone, in place of a resident operator"][0], func() {
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			_, dyn := clients(t, cfg)
			mapper := restMapper(t, cfg)
			for _, u := range residents {
				live := getSeeded(t, dyn, mapper, u)
				before[live.GetKind()+"/"+live.GetName()] = string(live.GetUID())
			}
			started = time.Now()
		})
		out := w.sh(blocks["Standalone, in place of a resident operator"][1])
		t.Logf("another terminal, %s after the start:\n%s", time.Since(started).Round(time.Second), out)
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		_, dyn := clients(t, cfg)
		mapper := restMapper(t, cfg)
		adopted := 0
		for _, u := range residents {
			live := getSeeded(t, dyn, mapper, u)
			key := live.GetKind() + "/" + live.GetName()
			if string(live.GetUID()) != before[key] {
				t.Errorf("%s: uid %s -> %s, want the resident operator's object adopted in place", key, before[key], live.GetUID())
			}
			if overlap, ours := fieldsStillResident(t, live, started); ours {
				adopted++
				if !overlap.Empty() {
					t.Errorf("%s: fields both %s and topolayer own: %s", key, caoResidentManager, overlap)
				}
			}
		}
		t.Logf("%d of the %d resident objects written again by topolayer, adopted in place", adopted, len(residents))
		if adopted == 0 {
			t.Error("topolayer wrote none of the resident objects")
		}
		stop()
	})
}

// seedObjects reads the objects of every YAML file in dir.
func seedObjects(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(u.Object) > 0 {
				out = append(out, u)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no objects", dir)
	}
	return out
}

// getSeeded reads the live object of the seeded object u.
func getSeeded(t *testing.T, dyn dynamic.Interface, mapper meta.RESTMapper, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	gvk := u.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s %s: %v", gvk, u.GetName(), err)
	}
	live, err := dyn.Resource(mapping.Resource).Namespace(u.GetNamespace()).Get(t.Context(), u.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s %s/%s: %v", mapping.Resource.Resource, u.GetNamespace(), u.GetName(), err)
	}
	return live
}
