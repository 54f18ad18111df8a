//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pollInterval is how often the output directory's size is measured during a run.
const pollInterval = 100 * time.Millisecond

// drainTimeout bounds the wait for stdout and stderr to reach EOF after the process group was
// killed; only a process that left the group can hold them open longer.
const drainTimeout = 2 * time.Second

// runProcess starts p in the sandbox, waits for it to end (killing its process group at the
// limits), reaps it and returns how it ended. An error means it did not start.
func (e *Exec) runProcess(ctx context.Context, p process) (outcome, error) {
	log := logger(ctx)
	if len(e.Command) == 0 || e.Command[0] == "" {
		return outcome{}, fmt.Errorf("operator %q: no command", p.op)
	}
	if err := ctx.Err(); err != nil {
		return outcome{}, fmt.Errorf("operator %q: %s: not started: %w", p.op, p.command, err)
	}
	path, err := exec.LookPath(e.Command[0])
	if err == nil {
		// The command runs in its HOME, so a relative path must not stay relative.
		path, err = filepath.Abs(path)
	}
	if err != nil {
		return outcome{}, fmt.Errorf("operator %q: %w", p.op, err)
	}
	home, err := os.MkdirTemp("", "topolayer-operator-home-")
	if err != nil {
		return outcome{}, fmt.Errorf("operator %q: create HOME: %w", p.op, err)
	}
	defer os.RemoveAll(home)

	outR, outW, err := os.Pipe()
	if err != nil {
		return outcome{}, fmt.Errorf("operator %q: %w", p.op, err)
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return outcome{}, fmt.Errorf("operator %q: %w", p.op, err)
	}
	defer errR.Close()

	argv, prlimit := e.argv(path, p)
	netns, probing, reason := e.networkPlan()
	var eg *egressRun
	if p.egress && netns {
		if eg, err = e.prepareEgress(ctx); err != nil {
			outW.Close()
			errW.Close()
			return outcome{}, fmt.Errorf("operator %q: %s: %w", p.op, p.command, err)
		}
		defer eg.close()
	}
	build := func(netns bool) (*exec.Cmd, error) {
		noProxyVar := ""
		if p.egress {
			noProxyVar = noProxy(e.Egress)
		}
		env, replaced, err := e.environ(home, !netns, p.env, noProxyVar)
		if err != nil {
			return nil, fmt.Errorf("operator %q: %w", p.op, err)
		}
		if len(replaced) > 0 {
			log.Info("the sandbox's refusing proxy replaces the run's proxy variables: no network namespace", "variables", replaced)
		}
		args := argv
		if netns && eg != nil {
			// The init sets the memory limit just before it becomes the operator.
			memory := int64(0)
			if prlimit {
				memory = e.Limits.Memory
			}
			if args, err = eg.command(e.initPath, argv, memory); err != nil {
				return nil, fmt.Errorf("operator %q: %w", p.op, err)
			}
		}
		cmd := &exec.Cmd{Path: args[0], Args: args, Env: env, Dir: home, Stdout: outW, Stderr: errW}
		cmd.SysProcAttr = sysProcAttr(netns)
		if netns && eg != nil {
			eg.attr(cmd.SysProcAttr)
			cmd.ExtraFiles = []*os.File{eg.child}
		}
		if netns && e.breakNetNS {
			cmd.SysProcAttr.UidMappings[0].Size = 0 // the kernel refuses this mapping
		}
		return cmd, nil
	}

	cmd, err := build(netns)
	if err == nil {
		err = cmd.Start()
		if err != nil && probing {
			// Learn whether the namespaces were the problem: the command did not run, so it
			// is safe to start it again without them.
			plain, berr := build(false)
			if berr != nil {
				err = berr
			} else if perr := plain.Start(); perr != nil {
				err = perr // the command itself does not start
			} else {
				cmd, err, netns, reason = plain, nil, false, err.Error()
				e.netnsProbe().record(reason)
				log.Info("network namespaces are unavailable; operators run with proxy variables only", "reason", reason)
			}
		} else if err == nil && probing {
			e.netnsProbe().record("")
		}
	}
	outW.Close()
	errW.Close()
	if err != nil {
		return outcome{}, fmt.Errorf("operator %q: %s: start: %w", p.op, p.command, err)
	}
	start := time.Now()
	pid := cmd.Process.Pid
	o := outcome{sandbox: sandboxName(netns, reason)}
	if !netns {
		log.Info("operator runs without a network namespace", "sandbox", o.sandbox)
	}
	var egressDone <-chan error
	var proxy *egressProxy
	if netns && eg != nil {
		proxy = newEgressProxy(p.op, eg.allow, func(msg string, kv ...any) {
			if msg == "egress" {
				log.V(1).Info(msg, kv...)
				return
			}
			log.Info(msg, kv...)
		})
		egressDone = eg.started(ctx, proxy)
		o.sandbox += " (egress: " + strings.Join(endpointStrings(e.Egress), ", ") + ")"
	}
	memory := "none"
	switch {
	case prlimit && egressDone != nil:
		memory = "RLIMIT_AS by the sandbox's init before exec"
		prlimit = false
	case prlimit:
		memory = "RLIMIT_AS by prlimit after start"
	case e.Limits.Memory > 0:
		memory = "RLIMIT_AS by shell ulimit"
	}
	log.V(1).Info("operator started", "command", p.command, "sandbox", o.sandbox, "memoryLimit", memory, "pid", pid)

	var copies sync.WaitGroup
	copies.Go(func() { _, _ = io.Copy(p.stdout, outR) })
	copies.Go(func() { _, _ = io.Copy(p.stderr, errR) })

	exited := make(chan error, 1)
	go func() { exited <- waitExited(pid) }()

	if prlimit {
		lim := uint64(e.Limits.Memory)
		// ESRCH: the command has already exited, there is nothing left to limit.
		if err := unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: lim, Max: lim}, nil); err != nil && !errors.Is(err, unix.ESRCH) {
			killGroup(pid)
			<-exited
			_ = cmd.Wait()
			return outcome{}, fmt.Errorf("operator %q: %s: set memory limit: %w", p.op, p.command, err)
		}
	}

	var timeout <-chan time.Time
	if e.Limits.Timeout > 0 {
		t := time.NewTimer(e.Limits.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var poll <-chan time.Time
	if p.watchDir != "" && p.outputLimit > 0 {
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		poll = t.C
	}
	done := ctx.Done()
	var waitErr error
wait:
	for {
		select {
		case waitErr = <-exited:
			break wait
		case <-timeout:
			o.timedOut = true
		case <-done:
			o.canceled = ctx.Err()
		case <-poll:
			size, err := dirSize(p.watchDir)
			if err != nil || size <= p.outputLimit {
				continue
			}
			o.tooLarge = size
		}
		// A limit was hit: kill the group once and wait for the exit.
		killGroup(pid)
		timeout, done, poll = nil, nil, nil
	}
	o.duration = time.Since(start)
	// The command has exited but is not reaped, so its pid (the group's id) cannot be reused
	// yet: kill whatever it left behind in its group.
	killGroup(pid)
	if err := cmd.Wait(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			waitErr = errors.Join(waitErr, err)
		}
	}
	o.state = cmd.ProcessState
	var egressErr error
	if egressDone != nil {
		// The init has exited or exec'd: it handed its listeners over or failed, never both.
		egressErr = <-egressDone
		proxy.close()
	}
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainTimeout):
		outR.Close()
		errR.Close()
		<-drained
	}
	if egressErr != nil {
		return outcome{}, fmt.Errorf("operator %q: %s: %w", p.op, p.command, egressErr)
	}
	if o.state == nil {
		return outcome{}, fmt.Errorf("operator %q: %s: wait: %w", p.op, p.command, waitErr)
	}
	log.V(1).Info("operator finished", "command", p.command, "exitCode", o.state.ExitCode(), "duration", o.duration)
	return o, nil
}

// sysProcAttr puts the command in its own process group, kills it when the runner's thread
// dies, and, with netns, in new user and network namespaces with the runner's uid and gid
// mapped to themselves (so the command gains no privilege in the new user namespace unless
// the runner is root).
func sysProcAttr(netns bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if netns {
		uid, gid := os.Getuid(), os.Getgid()
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// waitExited blocks until the process exits, without reaping it (WNOWAIT).
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) {
	_ = unix.Kill(-pgid, unix.SIGKILL)
}

// signalName names the signal that ended a process, or returns "".
func signalName(s *os.ProcessState) string {
	if ws, ok := s.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
