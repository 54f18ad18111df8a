package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/topolayer/topolayer/internal/contracttest/synth"
)

// TestSignalStopsPlan: SIGINT or SIGTERM during a long `plan` makes the process exit with
// 130 or 143 within 3 seconds of the signal, not finish its work and exit 0.
func TestSignalStopsPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the topolayer binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("watches the command open its input through /proc")
	}
	start := time.Now()
	bin := filepath.Join(t.TempDir(), "topolayer")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := synth.Write(dir, 5000); err != nil {
		t.Fatal(err)
	}
	t.Logf("built the binary and wrote the directory in %s", time.Since(start).Round(time.Millisecond))
	for _, tc := range []struct {
		name   string
		signal syscall.Signal
		want   int
	}{
		{"SIGINT", syscall.SIGINT, 130},
		{"SIGTERM", syscall.SIGTERM, 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "plan", "--config", standaloneConfig, "--from", dir, "-o", "json", "--max-output-size", "1Gi")
			cmd.Stdout = nil // discarded: the plan of 5,000 mutations is long
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// The signal must come once the command reads the directory: before main installs
			// its handler (package initialization, which a loaded machine can stretch past any
			// fixed delay), SIGTERM would end the process as the default action does.
			reading := time.NewTicker(2 * time.Millisecond)
			defer reading.Stop()
			deadline := time.After(30 * time.Second)
		wait:
			for {
				select {
				case err := <-done:
					t.Fatalf("plan ended before the signal (%v): make the directory larger", err)
				case <-deadline:
					t.Fatal("plan opened nothing in the directory within 30s")
				case <-reading.C:
					if opened(cmd.Process.Pid, dir) {
						break wait
					}
				}
			}
			sent := time.Now()
			if err := cmd.Process.Signal(tc.signal); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != tc.want {
					t.Fatalf("plan ended with %v, want exit status %d", err, tc.want)
				}
				t.Logf("exit status %d %s after the signal", exit.ExitCode(), time.Since(sent).Round(time.Millisecond))
			case <-time.After(3 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("plan still running 3s after %s", tc.name)
			}
		})
	}
}

// opened reports whether process pid has a file or directory under dir open (Linux's /proc).
func opened(pid int, dir string) bool {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && (target == dir || strings.HasPrefix(target, dir+"/")) {
			return true
		}
	}
	return false
}
