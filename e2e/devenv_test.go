package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// TestDevEnv drives the built topolayer-devenv binary: `up` returns with the servers running
// in the background, both kubeconfigs work (as kubectl would use them), a second `up` is
// refused, and `down` leaves no process and no data behind.
func TestDevEnv(t *testing.T) {
	bin := binary(t, "topolayer-devenv")
	dir := filepath.Join(t.TempDir(), "devenv")
	env := append(os.Environ(), cluster.EnvAssets+"="+assetsDir)
	devenv := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	down := func() (string, error) {
		if _, err := os.Stat(dir); err != nil {
			return "", nil
		}
		return devenv("down", "--dir", dir)
	}
	t.Cleanup(func() { // whatever happened below, leave nothing running
		if out, err := down(); err != nil {
			t.Errorf("cleanup: devenv down: %v\n%s", err, out)
		}
	})
	onInterrupt(t, func() { _, _ = down() })

	start := time.Now()
	out, err := devenv("up", "--dir", dir, "--config", filepath.Join("..", "examples", "hosted.yaml"))
	if err != nil {
		t.Fatalf("devenv up: %v\n%s", err, out)
	}
	t.Logf("devenv up took %s:\n%s", time.Since(start).Round(time.Millisecond), out)

	// `up` has exited; the servers must still run, in a session of their own.
	pidData, err := os.ReadFile(filepath.Join(dir, cluster.DevEnvPIDFile))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidData)))
	if err != nil {
		t.Fatalf("%s: %v", cluster.DevEnvPIDFile, err)
	}
	if sid := sessionOf(t, pid); sid != pid {
		t.Errorf("the serving process %d is in session %d, want a session of its own", pid, sid)
	}

	for file, want := range map[string]string{"management.kubeconfig": "clusters-example", "guest.kubeconfig": "default"} {
		names := namespacesVia(t, filepath.Join(dir, file))
		if !slices.Contains(names, want) {
			t.Errorf("%s: namespaces %v lack %s", file, names, want)
		}
	}
	// kubectl itself, where the machine has it.
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", filepath.Join(dir, "management.kubeconfig"), "get", "ns").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "clusters-example") {
			t.Errorf("kubectl --kubeconfig management.kubeconfig get ns: %v\n%s", err, out)
		}
	} else {
		t.Logf("kubectl is not on PATH: the kubeconfigs were checked with client-go only")
	}
	if procs := serverProcesses(t, dir); len(procs) != 4 {
		t.Errorf("%d kube-apiserver and etcd processes use %s, want 4 (two of each):\n%s", len(procs), dir, strings.Join(procs, "\n"))
	}

	if out, err := devenv("up", "--dir", dir); err == nil || !strings.Contains(out, "already running") {
		t.Errorf("a second devenv up: err = %v, want an error saying it is already running\n%s", err, out)
	}

	start = time.Now()
	out, err = devenv("down", "--dir", dir)
	if err != nil {
		t.Fatalf("devenv down: %v\n%s", err, out)
	}
	t.Logf("devenv down took %s:\n%s", time.Since(start).Round(time.Millisecond), out)

	// down waits for the processes itself; allow the kernel a moment to reap them.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return len(serverProcesses(t, dir)) == 0 && !alive(pid), nil
	}); err != nil {
		t.Errorf("after devenv down, still running: %v (serving process alive: %v)", serverProcesses(t, dir), alive(pid))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(dir)
		t.Errorf("after devenv down, %s still exists (err %v), holding %v", dir, err, entries)
	}

	if out, err := devenv("down", "--dir", dir); err != nil {
		t.Errorf("devenv down again: %v\n%s", err, out)
	}
}

// serverProcesses returns the command lines of the kube-apiserver and etcd processes whose
// command line mentions dir, read from /proc independently of package cluster.
func serverProcesses(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("list processes: %v", err)
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if name := filepath.Base(args[0]); (name == "kube-apiserver" || name == "etcd") && strings.Contains(string(cmdline), dir) {
			found = append(found, strings.Join(args, " "))
		}
	}
	return found
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	state, _ := procStat(pid)
	return state != "" && state != "Z" && state != "X"
}

// sessionOf returns the session id of pid.
func sessionOf(t *testing.T, pid int) int {
	t.Helper()
	_, fields := procStat(pid)
	if len(fields) < 4 {
		t.Fatalf("no /proc/%d/stat", pid)
	}
	sid, err := strconv.Atoi(fields[3]) // state ppid pgrp session
	if err != nil {
		t.Fatalf("/proc/%d/stat: session %q: %v", pid, fields[3], err)
	}
	return sid
}

// procStat returns a process's state and the fields of /proc/<pid>/stat after its name.
func procStat(pid int) (string, []string) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", nil
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return "", nil
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) == 0 {
		return "", nil
	}
	return fields[0], fields
}
