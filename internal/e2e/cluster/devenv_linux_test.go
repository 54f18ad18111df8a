package cluster

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Launch starts a detached process and, when it exits before it is ready, reports its log;
// ProcessesMentioning finds a process by an argument naming the directory.
func TestDevEnvLaunchFailureQuotesTheLog(t *testing.T) {
	d := DevEnv{Dir: t.TempDir()}
	cmd := exec.Command("sh", "-c", `echo "no luck in $TMPDIR" >&2; exit 3`)
	err := d.Launch(t.Context(), cmd, 30*time.Second)
	if err == nil {
		t.Fatal("Launch of a command that exits: no error")
	}
	want := "no luck in " + d.path(DevEnvDataDir) + "/tmp"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Launch error does not quote the log line %q:\n%v", want, err)
	}
	if err := d.Stop(t.Context(), time.Second); err != nil {
		t.Errorf("Stop after a failed Launch: %v", err)
	}
}

func TestProcessesMentioning(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", "sleep 60", dir+"/data/etcd") // $0 names the directory
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	procs, err := ProcessesMentioning(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids(procs), cmd.Process.Pid) {
		t.Errorf("ProcessesMentioning(%s) = %v, want pid %d among them", dir, procs, cmd.Process.Pid)
	}

	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		procs, err := ProcessesMentioning(dir)
		return len(procs) == 0, err
	}); err != nil {
		t.Errorf("after the process exited: %v", err)
	}
}

// Launch gives up after its timeout, and stops the command it started even if that never
// wrote its pid.
func TestDevEnvLaunchTimeout(t *testing.T) {
	d := DevEnv{Dir: t.TempDir()}
	cmd := exec.Command("sleep", "60")
	err := d.Launch(t.Context(), cmd, time.Second)
	if err == nil || !strings.Contains(err.Error(), "not ready after 1s") {
		t.Fatalf("Launch of a command that never gets ready: err = %v, want not ready after 1s", err)
	}
	if _, ok := processInfo(cmd.Process.Pid); ok {
		t.Errorf("the launched process %d still runs", cmd.Process.Pid)
	}
}
