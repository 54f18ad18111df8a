//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// sandboxMode is one way of isolating the network: the namespace, or the proxy variables
// the runner falls back to (forced here, so both are tested on every machine).
type sandboxMode struct {
	name    string
	noNetNS string
}

var sandboxModes = []sandboxMode{
	{name: "netns"},
	{name: "proxy-env", noNetNS: "forced by test"},
}

// netnsOnce learns whether this machine gives the runner network namespaces.
var netnsOnce = sync.OnceValue(func() string {
	e := &Exec{Command: []string{operatorBin("envdump")}}
	dir, err := os.MkdirTemp("", "runner-probe-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	res, err := e.Run(context.Background(), Request{InputDir: dir, OutputDir: filepath.Join(dir, "out")})
	if err != nil {
		return err.Error()
	}
	return res.Sandbox
})

// execFor builds an Exec for a test operator in a sandbox mode, skipping the test when the
// mode is the network namespace and the machine does not allow it.
func execFor(t *testing.T, mode sandboxMode, operator string, env map[string]string, limits Limits) *Exec {
	t.Helper()
	if mode.noNetNS == "" {
		if got := netnsOnce(); got != sandboxNetNS {
			t.Skipf("no network namespace on this machine: %s", got)
		}
	}
	return &Exec{Command: []string{operatorBin(operator)}, Env: env, Limits: limits, noNetNS: mode.noNetNS}
}

// newRequest returns a request with an input dir holding one file and an absent output dir.
func newRequest(t *testing.T) Request {
	t.Helper()
	in := t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "aggregated-discovery-api.yaml"), []byte("items: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Request{Operator: "test-operator", InputDir: in, OutputDir: filepath.Join(t.TempDir(), "out")}
}

func wantSandbox(t *testing.T, mode sandboxMode, got string) {
	t.Helper()
	want := sandboxNetNS
	if mode.noNetNS != "" {
		want = "proxy-env (no network namespace: " + mode.noNetNS + ")"
	}
	if got != want {
		t.Errorf("Sandbox = %q, want %q", got, want)
	}
}

func TestExecRunGood(t *testing.T) {
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			e := execFor(t, mode, "good", nil, Limits{Timeout: time.Minute, OutputSize: 1 << 20})
			req := newRequest(t)
			req.Now = time.Date(2026, 8, 1, 12, 30, 0, 0, time.UTC)
			req.Controllers = []string{"a", "-b"}
			res, err := e.Run(context.Background(), req)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			wantSandbox(t, mode, res.Sandbox)
			if res.Operator != "test-operator" || res.ExitCode != 0 || res.OutputBytes == 0 || res.Duration <= 0 {
				t.Errorf("Result = %+v", res)
			}
			if res.Stdout != "wrote 2 mutations\n" {
				t.Errorf("Stdout = %q", res.Stdout)
			}
			for _, want := range []string{
				"input-dir=" + req.InputDir + "\n",
				"output-dir=" + req.OutputDir + "\n",
				"now=2026-08-01T12:30:00Z\n",
				"controllers=a,-b\n",
			} {
				if !strings.Contains(res.Stderr, want) {
					t.Errorf("Stderr lacks %q:\n%s", want, res.Stderr)
				}
			}
			out, err := contract.ReadOutputDir(req.OutputDir, contract.ReadOptions{})
			if err != nil {
				t.Fatalf("ReadOutputDir: %v", err)
			}
			if len(out.Mutations) != 2 || !out.HasControllerResults {
				t.Errorf("output dir: %d mutations, controller results %v", len(out.Mutations), out.HasControllerResults)
			}
		})
	}
}

func TestExecRunRejectsRequest(t *testing.T) {
	nonEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(nonEmpty, "stale"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	good := &Exec{Command: []string{operatorBin("good")}}
	tests := []struct {
		name string
		exec *Exec
		req  Request
		want string
	}{
		{"no input dir", good, Request{OutputDir: filepath.Join(t.TempDir(), "out")}, "input dir is required"},
		{"missing input dir", good, Request{InputDir: filepath.Join(in, "missing"), OutputDir: filepath.Join(t.TempDir(), "out")}, "no such file"},
		{"no output dir", good, Request{InputDir: in}, "output dir is required"},
		{"output dir not empty", good, Request{InputDir: in, OutputDir: nonEmpty}, "not empty"},
		{"no command", &Exec{}, Request{InputDir: in, OutputDir: filepath.Join(t.TempDir(), "out")}, "no command"},
		{"missing binary", &Exec{Command: []string{filepath.Join(in, "nope")}}, Request{InputDir: in, OutputDir: filepath.Join(t.TempDir(), "out")}, "no such file"},
		{"KUBECONFIG in Env", &Exec{Command: good.Command, Env: map[string]string{"KUBECONFIG": "/k"}}, Request{InputDir: in, OutputDir: filepath.Join(t.TempDir(), "out")}, "env KUBECONFIG: not allowed"},
		{"HOME in Env", &Exec{Command: good.Command, Env: map[string]string{"HOME": "/root"}}, Request{InputDir: in, OutputDir: filepath.Join(t.TempDir(), "out")}, "env HOME: not allowed"},
		{"bad variable name", &Exec{Command: good.Command, Env: map[string]string{"A=B": "c"}}, Request{InputDir: in, OutputDir: filepath.Join(t.TempDir(), "out")}, "not a valid variable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.exec.Run(context.Background(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run error = %v, want it to contain %q", err, tt.want)
			}
			if res != nil {
				t.Errorf("Result = %+v for a run that did not start", res)
			}
		})
	}
}

// TestExecNetwork proves that an operator cannot reach a listener on the host's loopback
// interface from its network namespace, and that HTTP goes to the refusing proxy when there
// is no namespace. The proxy-env TCP case is the control: the listener is reachable from the
// host's network, so the namespace is what stops the netns cases.
func TestExecNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
	defer srv.Close()

	const remote = "http://operator-stays-offline.invalid/"
	tests := []struct {
		name        string
		mode        sandboxMode
		env         map[string]string
		wantConnect bool
		wantStderr  string
	}{
		{"netns tcp to host loopback", sandboxModes[0], map[string]string{"DIAL_TCP": ln.Addr().String()}, false, "network is unreachable"},
		{"netns http to host loopback", sandboxModes[0], map[string]string{"DIAL_HTTP": srv.URL}, false, "network is unreachable"},
		{"netns http to remote", sandboxModes[0], map[string]string{"DIAL_HTTP": remote}, false, "failed"},
		{"proxy-env http to remote", sandboxModes[1], map[string]string{"DIAL_HTTP": remote}, false, "127.0.0.1:1: connect: connection refused"},
		{"proxy-env https to remote", sandboxModes[1], map[string]string{"DIAL_HTTP": strings.Replace(remote, "http:", "https:", 1)}, false, "127.0.0.1:1: connect: connection refused"},
		{"proxy-env tcp to host loopback (control: not blocked)", sandboxModes[1], map[string]string{"DIAL_TCP": ln.Addr().String()}, true, "connected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := execFor(t, tt.mode, "dialer", tt.env, Limits{Timeout: time.Minute})
			before := accepted.Load() + served.Load()
			res, err := e.Run(context.Background(), newRequest(t))
			if res == nil {
				t.Fatalf("Run: %v", err)
			}
			wantSandbox(t, tt.mode, res.Sandbox)
			checkDial(t, res, err, tt.wantStderr, tt.wantConnect, accepted.Load()+served.Load() > before)
		})
	}
}

// checkDial checks a run (res, err) of the dialer operator: its stderr says wantStderr, and
// it reached the test's server or listener (reached) exactly when want says so; where it did
// not, the run failed with the dialer's exit code 7.
func checkDial(t *testing.T, res *Result, err error, wantStderr string, want, reached bool) {
	t.Helper()
	if !strings.Contains(res.Stderr, wantStderr) {
		t.Errorf("Stderr lacks %q:\n%s", wantStderr, res.Stderr)
	}
	if want {
		if err != nil || !reached {
			t.Errorf("reached=%v err=%v, want the operator to reach the test's server", reached, err)
		}
		return
	}
	var crash *CrashError
	if !errors.As(err, &crash) || crash.ExitCode != 7 {
		t.Errorf("Run error = %v, want the dialer's exit code 7", err)
	}
	if reached {
		t.Errorf("the operator reached the test's server")
	}
}

// pids parses "parent=P child=C" from the hang operator's stderr.
func pids(t *testing.T, stderr string) []int {
	t.Helper()
	var parent, child int
	for line := range strings.Lines(stderr) {
		if _, err := fmt.Sscanf(line, "parent=%d child=%d", &parent, &child); err == nil {
			return []int{parent, child}
		}
	}
	t.Fatalf("no pids in stderr:\n%s", stderr)
	return nil
}

// gone reports whether a process no longer runs: it does not exist or is a zombie waiting
// for its new parent to reap it.
func gone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] == 'Z'
}

func waitGone(t *testing.T, ps []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range ps {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			const timeout = time.Second
			e := execFor(t, mode, "hang", nil, Limits{Timeout: timeout})
			res, err := e.Run(context.Background(), newRequest(t))
			var te *TimeoutError
			if !errors.As(err, &te) || !te.Killed || te.Operator != "test-operator" || te.Timeout != timeout {
				t.Fatalf("Run error = %#v, want a TimeoutError", err)
			}
			if !strings.Contains(err.Error(), "killed after 1s") || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %q: want \"killed after 1s\", matching context.DeadlineExceeded", err)
			}
			if res == nil || res.ExitCode != -1 || res.Duration < timeout {
				t.Fatalf("Result = %+v", res)
			}
			waitGone(t, pids(t, res.Stderr))
		})
	}
}

func TestExecKillsLeftoverChildren(t *testing.T) {
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			e := execFor(t, mode, "hang", map[string]string{"HANG_EXIT": "1"}, Limits{Timeout: time.Minute})
			res, err := e.Run(context.Background(), newRequest(t))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			waitGone(t, pids(t, res.Stderr))
		})
	}
}

func TestExecCanceled(t *testing.T) {
	e := execFor(t, sandboxModes[1], "hang", nil, Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	res, err := e.Run(ctx, newRequest(t))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want context.Canceled", err)
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		t.Errorf("a canceled run is not a timeout: %v", err)
	}
	waitGone(t, pids(t, res.Stderr))
}

func TestExecCrash(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		wantCode   int
		wantSignal string
		wantErr    string
		bigStderr  bool
	}{
		{"exit code", nil, 3, "", `operator "test-operator": apply-configuration: exited with code 3: the last words`, false},
		{"signal", map[string]string{"CRASH_MODE": "signal"}, -1, "killed", "killed by signal: killed: the last words", false},
		{"stderr tail is bounded", map[string]string{"STDERR_BYTES": strconv.Itoa(4 << 20)}, 3, "", "exited with code 3: the last words", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := execFor(t, sandboxModes[0], "crash", tt.env, Limits{Timeout: time.Minute})
			res, err := e.Run(context.Background(), newRequest(t))
			var ce *CrashError
			if !errors.As(err, &ce) {
				t.Fatalf("Run error = %v, want a CrashError", err)
			}
			if ce.Operator != "test-operator" || ce.Command != cmdApplyConfiguration || ce.ExitCode != tt.wantCode || ce.Signal != tt.wantSignal {
				t.Errorf("CrashError = %+v", ce)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q lacks %q", err, tt.wantErr)
			}
			if res.ExitCode != tt.wantCode || !strings.HasSuffix(res.Stderr, "the last words\n") || ce.Stderr != res.Stderr {
				t.Errorf("Result = %+v", res)
			}
			if tt.bigStderr {
				if len(res.Stderr) > MaxLogTail+64 || !strings.Contains(res.Stderr, "earlier bytes dropped") {
					t.Errorf("stderr tail: %d bytes, starts %q", len(res.Stderr), res.Stderr[:min(80, len(res.Stderr))])
				}
			}
		})
	}
}

func TestExecOutputSize(t *testing.T) {
	const limit = 2 << 20
	tests := []struct {
		name    string
		env     map[string]string
		wantErr bool
	}{
		{"within the limit", map[string]string{"SIZE": strconv.Itoa(limit)}, false},
		{"over the limit at the end", map[string]string{"SIZE": strconv.Itoa(limit + 1)}, true},
		{"growing without end is stopped during the run", map[string]string{"FOREVER": "1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := execFor(t, sandboxModes[0], "bigoutput", tt.env, Limits{Timeout: 2 * time.Minute, OutputSize: limit})
			req := newRequest(t)
			res, err := e.Run(context.Background(), req)
			if !tt.wantErr {
				if err != nil || res.OutputBytes != limit {
					t.Fatalf("Run: %v, Result %+v", err, res)
				}
				return
			}
			var tl *OutputTooLargeError
			if !errors.As(err, &tl) || tl.Operator != "test-operator" || tl.Size <= limit || tl.Limit != limit || tl.Dir != req.OutputDir {
				t.Fatalf("Run error = %#v, want an OutputTooLargeError", err)
			}
			if _, err := os.Stat(req.OutputDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("output dir not removed: %v", err)
			}
			if res.OutputBytes != 0 {
				t.Errorf("OutputBytes = %d for a removed dir", res.OutputBytes)
			}
		})
	}
}

// dumpedEnv reads the variables the envdump operator printed, one NAME=value a line.
func dumpedEnv(stdout string) map[string]string {
	env := map[string]string{}
	for line := range strings.Lines(stdout) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		env[k] = v
	}
	return env
}

func TestExecEnvironment(t *testing.T) {
	// What a runner in a pod has, none of which may reach the operator.
	parent := map[string]string{
		"KUBECONFIG":              "/root/.kube/config",
		"KUBERNETES_SERVICE_HOST": "10.0.0.1",
		"KUBERNETES_SERVICE_PORT": "443",
		"HTTPS_PROXY":             "http://user:secret@proxy.corp:3128",
		"http_proxy":              "http://user:secret@proxy.corp:3128",
		"NO_PROXY":                ".corp",
		"AWS_SECRET_ACCESS_KEY":   "secret",
		"TOPOLAYER_TOKEN_FILE":    "/var/run/secrets/kubernetes.io/serviceaccount/token",
	}
	for k, v := range parent {
		t.Setenv(k, v)
	}
	proxyVars := map[string]string{
		"HTTP_PROXY": refusingProxy, "HTTPS_PROXY": refusingProxy, "ALL_PROXY": refusingProxy,
		"http_proxy": refusingProxy, "https_proxy": refusingProxy, "all_proxy": refusingProxy,
		"NO_PROXY": "", "no_proxy": "",
	}
	for _, mode := range sandboxModes {
		t.Run(mode.name, func(t *testing.T) {
			var logs logLines
			ctx := logr.NewContext(context.Background(), logs.logger())
			e := execFor(t, mode, "envdump", map[string]string{"OPERATOR_MODE": "hosted", "PATH": "/opt/operator/bin:/usr/bin:/bin"}, Limits{Timeout: time.Minute})
			res, err := e.Run(ctx, newRequest(t))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := dumpedEnv(res.Stdout)
			home := got["HOME"]
			want := map[string]string{"PATH": "/opt/operator/bin:/usr/bin:/bin", "HOME": home, "OPERATOR_MODE": "hosted"}
			if mode.noNetNS != "" {
				for k, v := range proxyVars {
					want[k] = v
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(filepath.Base(home), "topolayer-operator-home-") {
				t.Errorf("HOME = %q, want a temporary directory", home)
			}
			if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("HOME %s left behind: %v", home, err)
			}
			if want := fmt.Sprintf("cwd=%s uid=%d gid=%d\n", home, os.Getuid(), os.Getgid()); res.Stderr != want {
				t.Errorf("Stderr = %q, want %q", res.Stderr, want)
			}
			warned := logs.contains("operator runs without a network namespace")
			if warned != (mode.noNetNS != "") {
				t.Errorf("logged the missing network namespace: %v; logs:\n%s", warned, logs.String())
			}
		})
	}
}

// TestExecRequestEnv: a run's variables (Request.Env, read from the operator's inputs) join
// the runner's Env; denied ones are refused; without a network namespace the sandbox's
// refusing proxy replaces the run's proxy variables, and the log names them.
func TestExecRequestEnv(t *testing.T) {
	const proxy = "http://proxy.corp:3128"
	for _, tc := range []struct {
		name    string
		mode    sandboxMode
		env     map[string]string
		want    map[string]string // added to PATH and HOME
		wantErr string
		logged  string
	}{
		{name: "netns: the run's proxy and CA", mode: sandboxModes[0],
			env:  map[string]string{"HTTPS_PROXY": proxy, "NO_PROXY": ".cluster.local", "SSL_CERT_DIR": "/run/env/SSL_CERT_DIR", "OPERATOR_MODE": "from-input"},
			want: map[string]string{"HTTPS_PROXY": proxy, "NO_PROXY": ".cluster.local", "SSL_CERT_DIR": "/run/env/SSL_CERT_DIR", "OPERATOR_MODE": "from-input"}},
		{name: "proxy-env: the sandbox's proxy wins", mode: sandboxModes[1],
			env: map[string]string{"HTTPS_PROXY": proxy, "SSL_CERT_DIR": "/run/env/SSL_CERT_DIR"},
			want: map[string]string{"OPERATOR_MODE": "hosted", "SSL_CERT_DIR": "/run/env/SSL_CERT_DIR",
				"HTTP_PROXY": refusingProxy, "HTTPS_PROXY": refusingProxy, "ALL_PROXY": refusingProxy,
				"http_proxy": refusingProxy, "https_proxy": refusingProxy, "all_proxy": refusingProxy, "NO_PROXY": "", "no_proxy": ""},
			logged: "the sandbox's refusing proxy replaces the run's proxy variables"},
		{name: "a kubeconfig", mode: sandboxModes[0], env: map[string]string{"KUBECONFIG": "/root/.kube/config"}, wantErr: "env KUBECONFIG: not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logLines
			ctx := logr.NewContext(context.Background(), logs.logger())
			e := execFor(t, tc.mode, "envdump", map[string]string{"OPERATOR_MODE": "hosted"}, Limits{Timeout: time.Minute})
			req := newRequest(t)
			req.Env = tc.env
			res, err := e.Run(ctx, req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Run error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := dumpedEnv(res.Stdout)
			want := map[string]string{"PATH": "/usr/bin:/bin", "HOME": got["HOME"]}
			for k, v := range tc.want {
				want[k] = v
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			if tc.logged != "" && !logs.contains(tc.logged) {
				t.Errorf("the log does not say %q:\n%s", tc.logged, logs.String())
			}
		})
	}
}

func TestInProcessRefusesEnv(t *testing.T) {
	for _, r := range []Runner{
		&InProcess{Name: "p", Func: func(context.Context, Request) error { return nil }},
		&InMemory{Name: "m", Func: func(context.Context, ObjectsRequest) (*contract.OutputDir, error) { return nil, nil }},
	} {
		req := newRequest(t)
		req.Env = map[string]string{"HTTPS_PROXY": "http://proxy.corp:3128"}
		if _, err := r.Run(context.Background(), req); err == nil || !strings.Contains(err.Error(), "no environment of its own") {
			t.Errorf("%T: Run error = %v, want a refusal", r, err)
		}
	}
}

func TestExecMemoryLimit(t *testing.T) {
	// A Go binary needs about 700 MiB of address space to start under a limit, and has
	// reserved about 1.2 GiB when the limit comes after the start.
	// With egress and no shell, the sandbox's init sets the limit just before its exec.
	shims := []struct {
		name    string
		noShell bool
		limit   int64
		egress  bool
	}{{"shell ulimit", false, 1 << 30, false}, {"prlimit after start", true, 2 << 30, false}, {"egress init before exec", true, 1 << 30, true}}
	tests := []struct {
		name    string
		alloc   int
		wantErr bool
	}{
		{"within the limit", 64 << 20, false},
		{"beyond the limit", 3 << 30, true},
	}
	for _, shim := range shims {
		for _, tt := range tests {
			t.Run(shim.name+"/"+tt.name, func(t *testing.T) {
				e := execFor(t, sandboxModes[0], "memhog", map[string]string{"ALLOC": strconv.Itoa(tt.alloc)}, Limits{Timeout: time.Minute, Memory: shim.limit})
				e.noShell = shim.noShell
				if shim.egress {
					e.Egress = []Endpoint{{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 1}}
				}
				res, err := e.Run(context.Background(), newRequest(t))
				if !tt.wantErr {
					if err != nil || res.Stdout != fmt.Sprintf("allocated %d bytes\n", tt.alloc) {
						t.Fatalf("Run: %v, Result %+v", err, res)
					}
					return
				}
				// The memory hog is a Go program: its runtime says "out of memory" when an
				// allocation fails, "cannot allocate memory" or "failed to reserve" when its
				// own bookkeeping does (the garbage collector's work buffers, the heap's page
				// summaries), or faults at address zero when the collector's span queue is
				// refused: which one depends on where the limit is met. looksLikeOOM knows
				// all of them.
				var ce *CrashError
				if !errors.As(err, &ce) || ce.MemoryLimit != shim.limit {
					t.Fatalf("Run error = %v, want a CrashError for the memory limit; stderr:\n%s", err, stderrOf(err))
				}
				if res.Stdout != "" {
					t.Errorf("the operator allocated beyond its limit: %q", res.Stdout)
				}
			})
		}
	}
}

func TestExecResources(t *testing.T) {
	good := execFor(t, sandboxModes[0], "good", nil, Limits{Timeout: time.Minute})
	in, out, err := good.Resources(context.Background())
	if err != nil {
		t.Fatalf("Resources: %v", err)
	}
	wantIn := []contract.ExactResourceID{{
		ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"},
		Namespace:              "openshift-sample", Name: "settings",
	}}
	if diff := cmp.Diff(wantIn, in.ApplyConfigurationResources.ExactResources); diff != "" {
		t.Errorf("input-resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(contracttest.ValidOutputResources(), out); diff != "" {
		t.Errorf("output-resources (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		exec *Exec
		want string
	}{
		{"declarations that do not parse", &Exec{Command: good.Command, Env: map[string]string{"BAD_DECLARATIONS": "1"}},
			`operator "good": input-resources: applyConfigurationResources.exactResources[0].version: required`},
		{"crash", &Exec{Name: "crasher", Command: []string{operatorBin("crash")}},
			`operator "crasher": input-resources: exited with code 3: the last words`},
		{"timeout", &Exec{Command: []string{operatorBin("hang")}, Limits: Limits{Timeout: 500 * time.Millisecond}},
			`operator "hang": input-resources: killed after 500ms`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.exec.Resources(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Resources error = %v, want %q", err, tt.want)
			}
		})
	}
}

// logLines collects log lines for assertions.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
}

func (l *logLines) contains(s string) bool {
	return strings.Contains(l.String(), s)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestExecNetNSFallback makes starting in namespaces fail and checks that the runner learns
// it once: the first run falls back to the proxy variables and says why, later runs do not
// try again, and a run that cannot start at all is not mistaken for missing namespaces.
func TestExecNetNSFallback(t *testing.T) {
	probe := &netnsProbe{}
	var logs logLines
	ctx := logr.NewContext(context.Background(), logs.logger())
	e := &Exec{Command: []string{operatorBin("envdump")}, probe: probe, breakNetNS: true}

	missing := &Exec{Command: []string{filepath.Join(t.TempDir(), "absent")}, probe: probe, breakNetNS: true}
	if _, err := missing.Run(ctx, newRequest(t)); err == nil {
		t.Fatal("a missing binary started")
	}
	if try, probing, _ := probe.plan(); !try || !probing {
		t.Fatalf("a command that does not exist decided the probe")
	}

	for i := range 2 {
		res, err := e.Run(ctx, newRequest(t))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		t.Logf("run %d: %s", i, res.Sandbox)
		if !strings.HasPrefix(res.Sandbox, "proxy-env (no network namespace: fork/exec ") || !strings.Contains(res.Stdout, "HTTP_PROXY="+refusingProxy) {
			t.Errorf("run %d: Sandbox %q, environment:\n%s", i, res.Sandbox, res.Stdout)
		}
	}
	if try, probing, reason := probe.plan(); try || probing || reason == "" {
		t.Errorf("probe: try=%v probing=%v reason=%q, want namespaces recorded as unavailable", try, probing, reason)
	}
	if n := strings.Count(logs.String(), "network namespaces are unavailable"); n != 1 {
		t.Errorf("logged the probe's result %d times, want once:\n%s", n, logs.String())
	}
}

func TestExecRelativeCommand(t *testing.T) {
	e := execFor(t, sandboxModes[0], "good", nil, Limits{Timeout: time.Minute})
	req := newRequest(t)
	t.Chdir(binDir)
	e.Command = []string{"./good"} // the command runs in its HOME; this must not resolve there
	res, err := e.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if e.name() != "good" || res.Operator != "test-operator" {
		t.Errorf("name %q, Result.Operator %q", e.name(), res.Operator)
	}
}

// stderrOf returns the stderr a CrashError carries, for a failing test to show.
func stderrOf(err error) string {
	var ce *CrashError
	if errors.As(err, &ce) {
		return ce.Stderr
	}
	return ""
}
