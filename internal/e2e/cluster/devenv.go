package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// The files of a dev environment directory.
const (
	// DevEnvPIDFile holds the pid of the process serving the environment.
	DevEnvPIDFile = "devenv.pid"
	// DevEnvReadyFile appears once the API servers run and the kubeconfigs are written; it
	// lists the kubeconfigs, "<cluster> <file>" a line.
	DevEnvReadyFile = "ready"
	// DevEnvLogFile is the output of the serving process and of its API servers.
	DevEnvLogFile = "devenv.log"
	// DevEnvDataDir holds the etcd data, certificates and temporary files.
	DevEnvDataDir = "data"
)

// devEnvMarker marks Dir as a dev environment's: Stop removes nothing from a directory
// without it. Launch writes it; only a complete Stop removes it, so that a failed Launch's
// log can still be cleaned up by Stop.
const devEnvMarker = ".topolayer-devenv"

// ErrNoDevEnv is wrapped by DevEnv.Stop's error when Dir holds no dev environment.
var ErrNoDevEnv = errors.New("no dev environment there")

// ErrDevEnvRunning is wrapped by DevEnv.Launch's error when the directory's dev environment
// is already running.
var ErrDevEnvRunning = errors.New("a dev environment is already running there")

// pollInterval is how often DevEnv checks on processes and files.
const pollInterval = 200 * time.Millisecond

// DevEnv is a dev environment kept in the directory Dir (an absolute path): an Environment
// served by a detached background process that outlives whoever launched it. Dir holds the
// kubeconfigs (<cluster>.kubeconfig, see KubeconfigFile) and the files named DevEnv*: the
// pid file, the ready file, the log and the data directory.
//
// A launcher starts a command that runs Serve (the topolayer binary itself: `topolayer
// devenv serve`) with Launch, which returns once the environment is ready; Stop, from any
// process, ends it and removes what it left in Dir. Processes are found through /proc, so
// Launch and Stop work on Linux only.
type DevEnv struct {
	Dir string
}

func (d DevEnv) path(name string) string { return filepath.Join(d.Dir, name) }

// check refuses a directory that is not absolute: a detached process has its own working
// directory, and process command lines are matched against Dir.
func (d DevEnv) check() error {
	if d.Dir == "" || !filepath.IsAbs(d.Dir) || filepath.Clean(d.Dir) != d.Dir {
		return fmt.Errorf("dev environment directory %q: must be a clean absolute path", d.Dir)
	}
	return nil
}

// Launch starts cmd, which must serve this dev environment (call Serve with Dir), as a
// detached process: in a new session, with no standard input, its output appended to
// DevEnvLogFile, and TMPDIR in the data directory. It returns once DevEnvReadyFile appears.
// If cmd exits first, or timeout passes, or ctx ends, Launch stops whatever cmd started and
// returns an error that quotes the end of the log (the log is kept). A dev environment that
// is already running is an error wrapping ErrDevEnvRunning; the leftovers of one that died
// are removed first. cmd.Stdin, Stdout, Stderr and SysProcAttr are overwritten; cmd.Env, if
// nil, defaults to this process's environment.
func (d DevEnv) Launch(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) error {
	if err := d.check(); err != nil {
		return err
	}
	if pid, ok := d.PID(); ok {
		return fmt.Errorf("%s: %w (pid %d)", d.Dir, ErrDevEnvRunning, pid)
	}
	if procs, err := d.Processes(); err != nil {
		return err
	} else if len(procs) > 0 {
		return fmt.Errorf("%s: %w (processes %v use its data)", d.Dir, ErrDevEnvRunning, pids(procs))
	}
	if _, err := os.Stat(d.path(DevEnvDataDir)); err == nil && !d.ours() {
		return fmt.Errorf("%s exists, and is not a topolayer dev environment's: choose another directory", d.path(DevEnvDataDir))
	}
	if d.ours() {
		if err := d.removeFiles(true); err != nil { // what a dead one left
			return err
		}
	}
	tmp := filepath.Join(d.path(DevEnvDataDir), "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(d.path(devEnvMarker), nil, 0o644); err != nil {
		return err
	}
	logFile, err := os.OpenFile(d.path(DevEnvLogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, logFile, logFile
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	cmd.SysProcAttr = detached()
	if err := ignoreNotExist(os.Remove(d.path(DevEnvReadyFile))); err != nil { // only cmd may write it
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }() // reaps it if it exits while this process lives

	err = wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(context.Context) (bool, error) {
		select {
		case <-exited:
			return false, fmt.Errorf("the serving process exited before it was ready: %v", waitErr)
		default:
		}
		_, err := os.Stat(d.path(DevEnvReadyFile))
		return err == nil, nil
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("interrupted before it was ready: %w", ctx.Err())
	} else if wait.Interrupted(err) {
		err = fmt.Errorf("not ready after %s: %w", timeout, err)
	}
	// Stop what cmd started, and cmd itself, even if it never wrote its pid.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	stopErr := d.stop(context.Background(), time.Minute, false)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	return errors.Join(fmt.Errorf("%s: %w\n%s:\n%s", d.Dir, err, d.path(DevEnvLogFile), d.logTail(30)), stopErr)
}

// Serve runs env for the dev environment, in the process that Launch started: it writes
// DevEnvPIDFile, starts env with its data under DevEnvDataDir (unless env.DataDir is set),
// writes the kubeconfigs and then DevEnvReadyFile, and waits for ctx to end (SIGTERM, from
// Stop) to stop env. It returns when the API servers have stopped.
func (d DevEnv) Serve(ctx context.Context, env *Environment) (err error) {
	if err := d.check(); err != nil {
		return err
	}
	if err := writeFileAtomic(d.path(DevEnvPIDFile), []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, ignoreNotExist(os.Remove(d.path(DevEnvReadyFile))), ignoreNotExist(os.Remove(d.path(DevEnvPIDFile))))
	}()
	if env.DataDir == "" {
		env.DataDir = d.path(DevEnvDataDir)
	}
	if err := env.Start(ctx); err != nil {
		return err
	}
	if err := env.WriteKubeconfigs(d.Dir); err != nil {
		return errors.Join(err, env.Stop())
	}
	var ready strings.Builder
	for _, name := range env.Clusters() {
		fmt.Fprintf(&ready, "%s %s\n", name, KubeconfigFile(d.Dir, name))
	}
	if err := writeFileAtomic(d.path(DevEnvReadyFile), []byte(ready.String())); err != nil {
		return errors.Join(err, env.Stop())
	}
	env.progressf("dev environment ready in %s", d.Dir)
	<-ctx.Done()
	env.progressf("stopping")
	_ = os.Remove(d.path(DevEnvReadyFile))
	return env.Stop()
}

// Kubeconfigs returns the kubeconfig files of a ready dev environment, by cluster name, as
// DevEnvReadyFile lists them.
func (d DevEnv) Kubeconfigs() (map[string]string, error) {
	data, err := os.ReadFile(d.path(DevEnvReadyFile))
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for line := range strings.Lines(string(data)) {
		if name, file, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			files[name] = file
		}
	}
	return files, nil
}

// Stop ends the dev environment: it sends SIGTERM to the serving process and waits up to
// timeout for it and its API servers to exit, then kills whatever is left (the serving
// process, and every process whose command line mentions the data directory: the API
// servers and etcd, even if the serving process died), and removes the kubeconfigs, the
// files DevEnv* and the data; Dir itself goes too if nothing else is in it. Stopping a dev
// environment that is not running only removes its files. A directory that holds no dev
// environment (nothing running, and not marked by Launch as a dev environment's) is left
// alone, with an error wrapping ErrNoDevEnv.
func (d DevEnv) Stop(ctx context.Context, timeout time.Duration) error {
	if err := d.check(); err != nil {
		return err
	}
	if _, running := d.PID(); !running && !d.ours() {
		return fmt.Errorf("%s: %w", d.Dir, ErrNoDevEnv)
	}
	return d.stop(ctx, timeout, true)
}

// ours reports whether Dir carries the dev environment's mark.
func (d DevEnv) ours() bool {
	_, err := os.Stat(d.path(devEnvMarker))
	return err == nil
}

// stop stops the dev environment and removes its files; the log and Dir only if removeLog.
func (d DevEnv) stop(ctx context.Context, timeout time.Duration, removeLog bool) error {
	gone := func(context.Context) (bool, error) {
		if _, ok := d.PID(); ok {
			return false, nil
		}
		procs, err := d.Processes()
		return err == nil && len(procs) == 0, err
	}
	if pid, ok := d.PID(); ok {
		if err := kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop pid %d: %w", pid, err)
		}
	} else if err := d.signalProcesses(syscall.SIGTERM); err != nil { // orphans of a dead server
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, gone)
	if err != nil && wait.Interrupted(err) {
		if pid, ok := d.PID(); ok {
			_ = kill(pid, syscall.SIGKILL)
		}
		if err := d.signalProcesses(syscall.SIGKILL); err != nil {
			return err
		}
		err = wait.PollUntilContextTimeout(context.Background(), pollInterval, 10*time.Second, true, gone)
	}
	if err != nil {
		procs, _ := d.Processes()
		return fmt.Errorf("%s: processes %v still run: %w", d.Dir, pids(procs), err)
	}
	if err := d.removeFiles(removeLog); err != nil {
		return err
	}
	if removeLog {
		if err := os.Remove(d.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotEmpty(err) {
			return err
		}
	}
	return nil
}

// removeFiles removes what a dev environment writes in Dir (the log only if removeLog). The
// caller has checked that Dir is a dev environment's, or holds no data directory.
func (d DevEnv) removeFiles(removeLog bool) error {
	var errs []error
	for _, name := range []string{Management, Guest, Single} {
		errs = append(errs, ignoreNotExist(os.Remove(KubeconfigFile(d.Dir, name))))
	}
	for _, f := range []string{DevEnvReadyFile, DevEnvPIDFile} {
		errs = append(errs, ignoreNotExist(os.Remove(d.path(f))))
	}
	if removeLog {
		errs = append(errs, ignoreNotExist(os.Remove(d.path(DevEnvLogFile))), ignoreNotExist(os.Remove(d.path(devEnvMarker))))
	}
	errs = append(errs, os.RemoveAll(d.path(DevEnvDataDir)))
	return errors.Join(errs...)
}

// PID returns the pid of the process serving the dev environment, if it runs: the pid in
// DevEnvPIDFile, of a live process whose command line mentions Dir (a recycled pid does
// not count).
func (d DevEnv) PID() (int, bool) {
	data, err := os.ReadFile(d.path(DevEnvPIDFile))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	p, ok := processInfo(pid)
	if !ok || !mentions(p.Args, d.Dir) {
		return 0, false
	}
	return pid, true
}

// Processes returns the live processes, other than this one, whose command line mentions
// the data directory: the dev environment's API servers and etcd.
func (d DevEnv) Processes() ([]Process, error) {
	return ProcessesMentioning(d.path(DevEnvDataDir))
}

// signalProcesses sends sig to every process that Processes returns.
func (d DevEnv) signalProcesses(sig syscall.Signal) error {
	procs, err := d.Processes()
	if err != nil {
		return err
	}
	for _, p := range procs {
		if err := kill(p.PID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal pid %d: %w", p.PID, err)
		}
	}
	return nil
}

// logTail returns the last n lines of the log.
func (d DevEnv) logTail(n int) string {
	data, err := os.ReadFile(d.path(DevEnvLogFile))
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return lastLines(data, n)
}

// Process is a running process.
type Process struct {
	PID  int
	Args []string // its command line
}

// ProcessesMentioning returns the live processes, other than this one, with an argument
// that names dir or a path under it (dir must be clean and absolute). Zombies do not count.
// It reads /proc, so it works on Linux only.
func ProcessesMentioning(dir string) ([]Process, error) {
	all, err := processes()
	if err != nil {
		return nil, err
	}
	var found []Process
	for _, p := range all {
		if p.PID != os.Getpid() && mentions(p.Args, dir) {
			found = append(found, p)
		}
	}
	return found, nil
}

// mentions reports whether an argument names path or a path under it: path appears in it,
// neither preceded by a path character nor followed by anything but "/".
func mentions(args []string, path string) bool {
	for _, arg := range args {
		for i := 0; ; {
			j := strings.Index(arg[i:], path)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(path)
			before := start == 0 || !isPathChar(arg[start-1])
			after := end == len(arg) || arg[end] == '/'
			if before && after {
				return true
			}
			i = start + 1
		}
	}
	return false
}

func isPathChar(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func pids(procs []Process) []int {
	out := make([]int, 0, len(procs))
	for _, p := range procs {
		out = append(out, p.PID)
	}
	slices.Sort(out)
	return out
}

// writeFileAtomic writes a file under a temporary name and renames it into place, so that
// a reader sees all of it or nothing.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func ignoreNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
