//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "idp.example.com:443", want: "idp.example.com:443"},
		{in: "IdP.Example.com.:443", want: "idp.example.com:443"},
		{in: "127.0.0.1:8443", want: "127.0.0.1:8443"},
		{in: "[::1]:8443", want: "[::1]:8443"},
		{in: "10.0.0.0/24:443", want: "10.0.0.0/24:443"},
		{in: "[fd00::/64]:443", want: "[fd00::/64]:443"},
		{in: "10.0.0.7/32:443", want: "10.0.0.7:443"},
		{in: "idp.example.com", err: "not HOST:PORT"},
		{in: "idp.example.com:0", err: "from 1 to 65535"},
		{in: "idp.example.com:https", err: "from 1 to 65535"},
		{in: "*.example.com:443", err: "wildcards are not allowed"},
		{in: "*:443", err: "wildcards are not allowed"},
		{in: "0.0.0.0:443", err: "not an address of one host"},
		{in: "[::]:443", err: "not an address of one host"},
		{in: "0.0.0.0/0:443", err: "every address"},
		{in: "[::/0]:443", err: "every address"},
		{in: "10.0.0.1/24:443", err: "did you mean 10.0.0.0/24"},
		{in: "under_score.example.com:443", err: "RFC 1123"},
		{in: ":443", err: "no host"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			e, err := ParseEndpoint(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseEndpoint(%q) = %v, %v; want an error with %q", tc.in, e, err, tc.err)
				}
				return
			}
			if err != nil || e.String() != tc.want {
				t.Fatalf("ParseEndpoint(%q) = %v, %v; want %s", tc.in, e, err, tc.want)
			}
		})
	}
}

func TestNetworkNeeds(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		want         []string
	}{
		{"Go's dialer", `E1128 controller.go:1] Get "https://127.0.0.1:41233/.well-known/openid-configuration": dial tcp 127.0.0.1:41233: connect: network is unreachable`, []string{"127.0.0.1:41233"}},
		{"a URL without its port", `Get "https://idp.example.com/.well-known/openid-configuration": dial tcp: lookup idp.example.com on 10.0.0.10:53: dial udp 10.0.0.10:53: connect: network is unreachable`, []string{"idp.example.com:443"}},
		{"a name without a URL", `dial tcp: lookup ldap.example.com on 10.0.0.10:53: dial udp 10.0.0.10:53: connect: network is unreachable`, []string{"ldap.example.com"}},
		{"no such host", `dial tcp: lookup idp.example.com: no such host`, []string{"idp.example.com"}},
		{"a raw dial", "tcp 10.1.2.3:636: failed: dial tcp 10.1.2.3:636: connect: no route to host\nagain: dial tcp 10.1.2.3:636: connect: no route to host\n", []string{"10.1.2.3:636"}},
		{"another failure", `Get "https://127.0.0.1:41233/": dial tcp 127.0.0.1:41233: connect: connection refused`, nil},
		{"nothing", "wrote 2 mutations\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NetworkNeeds(tc.output); !slices.Equal(got, tc.want) {
				t.Errorf("NetworkNeeds = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAllowedTo checks the per-connection decision: an address and a port, both allowed.
func TestAllowedTo(t *testing.T) {
	allow, err := resolveEgress(context.Background(), []Endpoint{
		mustEndpoint(t, "idp.test:443"), mustEndpoint(t, "10.0.0.0/24:636"), mustEndpoint(t, "[fd00::1]:8443"),
	}, func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("::ffff:192.0.2.8")}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dst, want := range map[string]bool{
		"192.0.2.7:443": true, "192.0.2.8:443": true, "[::ffff:192.0.2.7]:443": true, "192.0.2.7:444": false, "192.0.2.9:443": false,
		"10.0.0.200:636": true, "10.0.1.1:636": false, "10.0.0.1:443": false, "[fd00::1]:8443": true, "[fd00::2]:8443": false,
	} {
		if got := allow.allows(netip.MustParseAddrPort(dst)); got != want {
			t.Errorf("allows(%s) = %v, want %v", dst, got, want)
		}
	}
	if got, want := allow.listeners(), []string{"0.0.0.0:443", "0.0.0.0:636", "[::]:8443"}; !slices.Equal(got, want) {
		t.Errorf("listeners = %q, want %q", got, want)
	}
	if got := allow.hosts(); !strings.Contains(got, "192.0.2.7\tidp.test\n192.0.2.8\tidp.test\n") {
		t.Errorf("hosts:\n%s", got)
	}
}

func mustEndpoint(t *testing.T, s string) Endpoint {
	t.Helper()
	e, err := ParseEndpoint(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestExecEgress runs the dialer in its network namespace against a real HTTP server on
// the host's loopback interface: reached when an endpoint allows it (by address or by a
// name the runner resolves), refused otherwise, also when the port is allowed for another
// address.
// connectionReset is what the operator's HTTP client reports of a connection the sandbox's
// proxy resets. The proxy resets only once the request is written, so the client's read
// meets the reset, not its write (which would report it, or "broken pipe", and leave the
// read an "EOF").
const connectionReset = "connection reset by peer"

func TestExecEgress(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	otherPort := other.Addr().(*net.TCPAddr).Port
	other.Close()
	byName := "http://idp.test:" + port + "/.well-known/openid-configuration"

	tests := []struct {
		name       string
		egress     []string
		url        string
		wantServed bool
		wantStderr string
	}{
		{"allowed address", []string{"127.0.0.1:" + port}, srv.URL, true, "connected: 200 OK"},
		{"allowed name", []string{"idp.test:" + port}, byName, true, "connected: 200 OK"},
		{"allowed network", []string{"127.0.0.0/30:" + port}, srv.URL, true, "connected: 200 OK"},
		{"another port", []string{fmt.Sprintf("127.0.0.1:%d", otherPort)}, srv.URL, false, "connection refused"},
		{"the port, for another address", []string{"127.0.0.2:" + port}, srv.URL, false, connectionReset},
		{"allowed, nothing listening there", []string{fmt.Sprintf("127.0.0.1:%d", otherPort)}, fmt.Sprintf("http://127.0.0.1:%d/", otherPort), false, connectionReset},
		{"a name not allowed", []string{"127.0.0.1:" + port}, byName, false, "idp.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := execFor(t, sandboxModes[0], "dialer", map[string]string{"DIAL_HTTP": tt.url}, Limits{Timeout: time.Minute})
			for _, s := range tt.egress {
				e.Egress = append(e.Egress, mustEndpoint(t, s))
			}
			e.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
				if host == "idp.test" {
					return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
				}
				return nil, fmt.Errorf("lookup %s: no such host", host)
			}
			before := served.Load()
			res, err := e.Run(context.Background(), newRequest(t))
			if res == nil {
				t.Fatalf("Run: %v", err)
			}
			if want := "netns (egress: " + strings.Join(tt.egress, ", ") + ")"; res.Sandbox != want {
				t.Errorf("Sandbox = %q, want %q", res.Sandbox, want)
			}
			checkDial(t, res, err, tt.wantStderr, tt.wantServed, served.Load() > before)
		})
	}
}

// TestExecEgressProcess checks that the init is invisible to the runner: the operator's
// exit code and signal are the run's, and the timeout kills the operator's whole group.
func TestExecEgressProcess(t *testing.T) {
	egress := []Endpoint{mustEndpoint(t, "127.0.0.1:1")}
	t.Run("exit code", func(t *testing.T) {
		e := execFor(t, sandboxModes[0], "crash", nil, Limits{Timeout: time.Minute})
		e.Egress = egress
		_, err := e.Run(context.Background(), newRequest(t))
		var crash *CrashError
		if !errors.As(err, &crash) || crash.ExitCode != 3 || crash.Signal != "" || !strings.Contains(crash.Stderr, "the last words") {
			t.Errorf("Run error = %#v, want exit code 3", err)
		}
	})
	t.Run("signal", func(t *testing.T) {
		e := execFor(t, sandboxModes[0], "crash", map[string]string{"CRASH_MODE": "signal"}, Limits{Timeout: time.Minute})
		e.Egress = egress
		_, err := e.Run(context.Background(), newRequest(t))
		var crash *CrashError
		if !errors.As(err, &crash) || crash.ExitCode != -1 || crash.Signal != "killed" {
			t.Errorf("Run error = %v, want killed by SIGKILL", err)
		}
	})
	t.Run("timeout kills the group", func(t *testing.T) {
		e := execFor(t, sandboxModes[0], "hang", nil, Limits{Timeout: time.Second})
		e.Egress = egress
		res, err := e.Run(context.Background(), newRequest(t))
		var te *TimeoutError
		if !errors.As(err, &te) || !te.Killed {
			t.Fatalf("Run error = %v, want a timeout", err)
		}
		waitGone(t, pids(t, res.Stderr))
	})
	t.Run("canceled (Ctrl-C)", func(t *testing.T) {
		e := execFor(t, sandboxModes[0], "hang", nil, Limits{})
		e.Egress = egress
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		res, err := e.Run(ctx, newRequest(t))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run error = %v, want context.Canceled", err)
		}
		waitGone(t, pids(t, res.Stderr))
	})
	t.Run("a program that is not an init", func(t *testing.T) {
		e := execFor(t, sandboxModes[0], "good", nil, Limits{Timeout: time.Minute})
		e.Egress, e.initPath = egress, operatorBin("crash")
		_, err := e.Run(context.Background(), newRequest(t))
		if !errors.Is(err, errEgressSetup) || !strings.Contains(err.Error(), "the init exited before it handed over its listeners") {
			t.Errorf("Run error = %v, want an egress setup error", err)
		}
	})
	t.Run("a name that does not resolve", func(t *testing.T) {
		e := execFor(t, sandboxModes[0], "good", nil, Limits{Timeout: time.Minute})
		e.Egress = []Endpoint{mustEndpoint(t, "idp.invalid:443")}
		e.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
			return nil, fmt.Errorf("lookup %s: no such host", host)
		}
		if _, err := e.Run(context.Background(), newRequest(t)); err == nil || !strings.Contains(err.Error(), "egress idp.invalid:443: lookup idp.invalid: no such host") {
			t.Errorf("Run error = %v", err)
		}
	})
}

// TestRunInitOutsideTheSandbox: the init, run by hand, changes nothing of the host.
func TestRunInitOutsideTheSandbox(t *testing.T) {
	code := RunInit([]string{`{"routes":["198.51.100.0/24"],"listen":["0.0.0.0:1"]}`, "--", "/bin/true"})
	if code != initExit {
		t.Errorf("RunInit = %d, want %d", code, initExit)
	}
}

// TestEgressProxyRefuses checks how the proxy refuses a connection it does not allow: it
// waits for the client's request, so the client's write succeeds and its read is reset,
// however late the request comes (within refuseWait), or at once if the server would have
// spoken first.
func TestEgressProxyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		delay   time.Duration
		request bool
	}{
		{"request at once", 0, true},
		{"request late", 200 * time.Millisecond, true},
		{"no request", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr, refused := startRefusing(t, nil, func(msg string) bool { return strings.HasPrefix(msg, "egress refused") })
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			time.Sleep(tc.delay)
			if tc.request {
				if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
					t.Fatalf("write: %v, want the request written", err)
				}
			}
			_ = c.SetReadDeadline(time.Now().Add(refuseWait + 10*time.Second))
			if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("read: %v, want connection reset by peer", err)
			}
			if refused.Load() != 1 {
				t.Errorf("refusals logged: %d, want 1", refused.Load())
			}
		})
	}
}

// TestEgressProxyLimits checks that an operator opening connections without end costs the
// runner a bounded number of them: past the proxy's limits (here small; refusals wait a
// minute), a connection is reset at once, and the ones already held are kept.
func TestEgressProxyLimits(t *testing.T) {
	for _, tc := range []struct {
		name           string
		slots, waiting int
		wantLog        string
	}{
		{"refusals waiting for their request", 4, 2, ""},
		{"connections held", 2, 4, "egress refused: too many connections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, addr, logged := startRefusing(t, func(p *egressProxy) {
				p.slots, p.waiting, p.refuseWait = make(chan struct{}, tc.slots), make(chan struct{}, tc.waiting), time.Minute
			}, func(msg string) bool { return tc.wantLog != "" && msg == tc.wantLog })
			held := min(tc.slots, tc.waiting)
			for range held {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
			}
			// The held connections are waiting before the next one comes.
			for deadline := time.Now().Add(30 * time.Second); len(p.waiting) < held; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d connections waiting, want %d", len(p.waiting), held)
				}
			}
			// Reset at once: the connect itself may already meet the reset.
			c, err := net.Dial("tcp", addr)
			if err == nil {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
				_, err = c.Read(make([]byte, 1))
			}
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("past the limit: %v, want connection reset by peer at once", err)
			}
			if len(p.waiting) != held {
				t.Errorf("%d connections waiting after the one past the limit, want %d still", len(p.waiting), held)
			}
			if tc.wantLog != "" && logged.Load() != 1 {
				t.Errorf("%q logged %d times, want 1", tc.wantLog, logged.Load())
			}
		})
	}
}

// startRefusing starts a proxy that allows nothing on a loopback listener, after setup (nil:
// the proxy's defaults), and closes it when the test ends. It returns the proxy, its address
// and the count of the messages it logged that counted says.
func startRefusing(t *testing.T, setup func(*egressProxy), counted func(msg string) bool) (*egressProxy, string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	p := newEgressProxy("test", nil, func(msg string, _ ...any) {
		if counted(msg) {
			n.Add(1)
		}
	})
	if setup != nil {
		setup(p)
	}
	p.serve(context.Background(), ln)
	t.Cleanup(p.close)
	return p, ln.Addr().String(), &n
}
