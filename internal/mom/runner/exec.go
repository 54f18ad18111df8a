package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/topolayer/topolayer/contract"
)

// Exec runs a MOM contract binary in a sandbox:
//
//   - Environment: only PATH=/usr/bin:/bin, HOME (a fresh temporary directory, also the
//     working directory, removed after the command), Env and the run's Request.Env (values
//     read from the operator's inputs, such as the cluster Proxy's). Nothing is inherited
//     from the runner, so no KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT or proxy credentials.
//   - Network: the command starts in a new user and network namespace (the user keeps its
//     uid and gid), where only a loopback interface exists and it is down: no connection
//     leaves the process, not even to 127.0.0.1. Whether the system allows that is learned
//     by the first start in this process; where it does not, the command runs in the host's
//     network with HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (both spellings) set to
//     http://127.0.0.1:1, which refuses, and NO_PROXY empty. That stops proxy-aware HTTP
//     clients only (Go's client still talks directly to loopback addresses, raw sockets are
//     not stopped); Result.Sandbox and a log line say so. Egress opens named endpoints to
//     apply-configuration, and only them (see Egress).
//   - Processes: the command leads its own process group. The whole group is killed with
//     SIGKILL at Limits.Timeout, when the output grows over Limits.OutputSize, when ctx is
//     canceled, and as soon as the command exits (so nothing it started outlives it). A
//     process that leaves the group (setsid) escapes this; the parent-death signal kills the
//     command, not its descendants, if the runner itself dies.
//   - Memory: Limits.Memory is RLIMIT_AS (soft and hard), set by a /bin/sh shim
//     (`ulimit -v`, then exec) before the operator's first instruction, so its runtime sees
//     the limit from the start (a Go runtime sizes its reservations to it). Where /bin/sh
//     does not exist (distroless images) it is set with prlimit(2) right after the start:
//     by then a Go operator's runtime may already have reserved about 1.2 GiB of address
//     space, so such a limit must be above that, and a program could map memory in the
//     first microseconds before the limit applies. os/exec cannot set rlimits for a child,
//     and the cgroup v2 memory controller, which would bound resident memory, is not
//     generally delegated to the runner (see Limits.Memory).
//   - Output: stdout and stderr keep their last MaxLogTail bytes; the output directory's
//     size is polled every 100ms during the run and measured after it.
//
// The filesystem is not isolated: the command runs as the runner's user.
type Exec struct {
	// Name names the operator in results, errors and logs; empty means the base name of
	// Command[0]. Request.Operator overrides it for Run.
	Name string
	// Command is the operator binary and any leading arguments; the contract command and its
	// flags are appended. A name without a slash is looked up in the runner's PATH.
	Command []string
	// Env is the operator's environment besides PATH and HOME. It may override PATH; it may
	// not set HOME, KUBECONFIG, KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT.
	Env map[string]string
	// Limits bound every command the runner starts.
	Limits Limits
	// Egress are the only destinations apply-configuration may reach (none by default).
	// In the network namespace, the sandbox's init (RunInit: the running program started
	// again, which must call RunInit from main) routes their addresses to the namespace's
	// loopback interface, listens on their ports and hands the listening sockets to the
	// runner, then becomes the operator without its capabilities; the runner accepts each
	// connection, and connects to its destination only when an endpoint allows that
	// address and port: nothing else is reachable. Names are resolved by the runner at
	// every run and written in an /etc/hosts of the operator's own (a mount namespace).
	// Without a network namespace, NO_PROXY names them, so proxy-aware clients reach them
	// directly.
	Egress []Endpoint

	// noNetNS, when set, skips the network namespace with this reason (tests).
	noNetNS string
	// noShell, when set, applies Limits.Memory with prlimit(2) instead of the shell (tests).
	noShell bool
	// probe, when set, replaces the process-wide netnsSupport (tests).
	probe *netnsProbe
	// breakNetNS, when set, makes starts in namespaces fail (tests).
	breakNetNS bool
	// initPath, when set, is the sandbox's init instead of the running program (tests).
	initPath string
	// lookup, when set, resolves Egress names instead of the runner's resolver (tests).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

var _ Runner = (*Exec)(nil)

// Contract commands.
const (
	cmdInputResources     = "input-resources"
	cmdOutputResources    = "output-resources"
	cmdApplyConfiguration = "apply-configuration"
)

// maxDeclarationSize bounds what input-resources and output-resources may print.
const maxDeclarationSize = 16 << 20

// refusingProxy is where proxy variables point when there is no network namespace.
const refusingProxy = "http://127.0.0.1:1"

// sandboxNetNS is Result.Sandbox when the command ran in its own network namespace.
const sandboxNetNS = "netns"

// deniedEnv are variables Env may not set.
var deniedEnv = []string{"HOME", "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}

// netnsProbe records whether commands can start in new user and network namespaces: the
// first start tries, and when it fails while a start without namespaces succeeds, reason
// says why and every later start goes without.
type netnsProbe struct {
	mu     sync.Mutex
	known  bool
	reason string
}

// netnsSupport is the probe every Exec shares. Whether namespaces work is a fact about the
// system, so it is learned once per process; this is the package's only mutable state.
var netnsSupport netnsProbe

func (e *Exec) name() string {
	if e.Name != "" {
		return e.Name
	}
	if len(e.Command) > 0 {
		return filepath.Base(e.Command[0])
	}
	return "unnamed"
}

// Resources runs the input-resources and output-resources commands and parses what they
// print.
func (e *Exec) Resources(ctx context.Context) (*contract.InputResources, *contract.OutputResources, error) {
	op := e.name()
	declaration := func(command string) ([]byte, error) {
		stdout := &boundedBuffer{max: maxDeclarationSize}
		p := process{op: op, command: command, args: []string{command}, stdout: stdout, stderr: newTailBuffer(MaxLogTail)}
		o, err := e.runProcess(ctx, p)
		if err != nil {
			return nil, err
		}
		if err := o.err(p, e.Limits); err != nil {
			return nil, err
		}
		data, overflow := stdout.Bytes()
		if overflow {
			return nil, fmt.Errorf("operator %q: %s: output over %d bytes", op, command, maxDeclarationSize)
		}
		return data, nil
	}
	data, err := declaration(cmdInputResources)
	if err != nil {
		return nil, nil, err
	}
	in, err := contract.ParseInputResources(data)
	if err != nil {
		return nil, nil, fmt.Errorf("operator %q: %s: %w", op, cmdInputResources, err)
	}
	data, err = declaration(cmdOutputResources)
	if err != nil {
		return nil, nil, err
	}
	out, err := contract.ParseOutputResources(data)
	if err != nil {
		return nil, nil, fmt.Errorf("operator %q: %s: %w", op, cmdOutputResources, err)
	}
	return in, out, nil
}

// Run runs `<Command> apply-configuration --input-dir I --output-dir O [--now=T]
// [--controllers=a,b]` once in the sandbox.
func (e *Exec) Run(ctx context.Context, req Request) (*Result, error) {
	op := operatorName(req, e.name())
	in, out, err := prepareDirs(op, req)
	if err != nil {
		return nil, err
	}
	args := []string{cmdApplyConfiguration, "--input-dir", in, "--output-dir", out}
	if !req.Now.IsZero() {
		args = append(args, "--now="+req.Now.Format(time.RFC3339))
	}
	if len(req.Controllers) > 0 {
		args = append(args, "--controllers="+strings.Join(req.Controllers, ","))
	}
	p := process{
		op: op, command: cmdApplyConfiguration, args: args, env: req.Env, egress: len(e.Egress) > 0,
		stdout: newTailBuffer(MaxLogTail), stderr: newTailBuffer(MaxLogTail),
		watchDir: out, outputLimit: e.Limits.OutputSize,
	}
	o, err := e.runProcess(ctx, p)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Operator: op,
		Duration: o.duration,
		ExitCode: o.state.ExitCode(),
		Stdout:   p.stdout.(*tailBuffer).String(),
		Stderr:   p.stderr.String(),
		Sandbox:  o.sandbox,
	}
	if o.tooLarge > 0 {
		return res, tooLarge(op, out, o.tooLarge, e.Limits.OutputSize)
	}
	runErr := o.err(p, e.Limits)
	var timeout *TimeoutError
	if errors.As(runErr, &timeout) || o.canceled != nil {
		// A killed run's output is partial; it is left for inspection and not measured
		// against the limit.
		res.OutputBytes, _ = dirSize(out)
		return res, runErr
	}
	size, sizeErr := checkOutputSize(op, out, e.Limits.OutputSize)
	res.OutputBytes = size
	return res, errors.Join(runErr, sizeErr)
}

// process is one command to start.
type process struct {
	op, command string
	args        []string          // appended to Exec.Command
	env         map[string]string // added to Exec.Env (Request.Env)
	egress      bool              // Exec.Egress applies (apply-configuration)
	stdout      io.Writer
	stderr      *tailBuffer
	watchDir    string // polled for its size when outputLimit > 0
	outputLimit int64
}

// outcome is how a process ended.
type outcome struct {
	state    *os.ProcessState
	duration time.Duration
	sandbox  string
	timedOut bool
	tooLarge int64 // the size that made the runner stop the process, or 0
	canceled error // the context's error when the caller canceled
}

// err turns an outcome into the run's error, or nil when the command succeeded.
func (o outcome) err(p process, l Limits) error {
	switch {
	case o.tooLarge > 0:
		return &OutputTooLargeError{Operator: p.op, Dir: p.watchDir, Size: o.tooLarge, Limit: p.outputLimit}
	case o.timedOut:
		return &TimeoutError{Operator: p.op, Command: p.command, Timeout: l.Timeout, Killed: true}
	case o.canceled != nil:
		return fmt.Errorf("operator %q: %s: killed: %w", p.op, p.command, o.canceled)
	case o.state.Success():
		return nil
	}
	stderr := p.stderr.String()
	ce := &CrashError{
		Operator: p.op,
		Command:  p.command,
		ExitCode: o.state.ExitCode(),
		Signal:   signalName(o.state),
		Stderr:   stderr,
		Err:      &exec.ExitError{ProcessState: o.state},
	}
	if l.Memory > 0 && looksLikeOOM(stderr) {
		ce.MemoryLimit = l.Memory
	}
	return ce
}

// environ builds the command's environment: Exec.Env, then the run's variables (extra).
// proxy sets the refusing proxy variables, with NO_PROXY set to noProxy; replaced names the
// variables of extra they replaced.
func (e *Exec) environ(home string, proxy bool, extra map[string]string, noProxy string) (list, replaced []string, err error) {
	env := map[string]string{"PATH": "/usr/bin:/bin"}
	for _, vars := range []map[string]string{e.Env, extra} {
		for k, v := range vars {
			switch {
			case k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0):
				return nil, nil, fmt.Errorf("env %q: not a valid variable", k)
			case slices.Contains(deniedEnv, k):
				return nil, nil, fmt.Errorf("env %s: not allowed: operators run offline, with a HOME of their own", k)
			}
			env[k] = v
		}
	}
	env["HOME"] = home
	if proxy {
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"} {
			for _, name := range []string{k, strings.ToLower(k)} {
				if _, set := extra[name]; set {
					replaced = append(replaced, name)
				}
				env[name] = refusingProxy
				if k == "NO_PROXY" {
					env[name] = noProxy
				}
			}
		}
	}
	list = make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		list = append(list, k+"="+env[k])
	}
	return list, replaced, nil
}

// shell is the shim that sets RLIMIT_AS before the operator runs.
const shell = "/bin/sh"

// shimScript sets the address-space limit ($1, in KiB, soft and hard) and replaces itself
// with the operator.
const shimScript = `ulimit -v "$1" || exit 125; shift; exec "$@"`

// argv returns the program and arguments to start for p, and whether the memory limit is
// still to be applied after the start (no shell).
func (e *Exec) argv(path string, p process) (argv []string, prlimit bool) {
	argv = append(append([]string{path}, e.Command[1:]...), p.args...)
	if e.Limits.Memory <= 0 {
		return argv, false
	}
	if fi, err := os.Stat(shell); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 && !e.noShell {
		kib := strconv.FormatInt((e.Limits.Memory+1023)/1024, 10)
		return append([]string{shell, "-c", shimScript, "topolayer-rlimit", kib}, argv...), false
	}
	return argv, true
}

// netnsProbe returns the probe this Exec uses.
func (e *Exec) netnsProbe() *netnsProbe {
	if e.probe != nil {
		return e.probe
	}
	return &netnsSupport
}

// plan decides whether to try a network namespace (probing: for the first time), and why
// not.
func (n *netnsProbe) plan() (try, probing bool, reason string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.known {
		return true, true, ""
	}
	return n.reason == "", false, n.reason
}

// record stores what a probing start learned; an empty reason means namespaces work.
func (n *netnsProbe) record(reason string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.known, n.reason = true, reason
}

// networkPlan decides whether to try a network namespace, and why not.
func (e *Exec) networkPlan() (try, probing bool, reason string) {
	if e.noNetNS != "" {
		return false, false, e.noNetNS
	}
	return e.netnsProbe().plan()
}

// sandboxName is Result.Sandbox for a start with or without a network namespace.
func sandboxName(netns bool, reason string) string {
	if netns {
		return sandboxNetNS
	}
	return "proxy-env (no network namespace: " + reason + ")"
}

// logger is the run's logger. The scheduler named the operator and the run on the logger
// of ctx (WithValues once per run): adding them again would write each key twice.
func logger(ctx context.Context) logr.Logger {
	return logr.FromContextOrDiscard(ctx).WithName("runner")
}
