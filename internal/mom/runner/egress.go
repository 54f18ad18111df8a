package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Endpoint is one destination an operator's sandbox may reach over TCP (Exec.Egress): a
// host name, an IP address or a network, and a port.
type Endpoint struct {
	// Host is a DNS name, resolved by the runner at every run; empty when Prefix is set.
	Host string
	// Prefix is an address (a /32 or /128) or a network; invalid when Host is set.
	Prefix netip.Prefix
	// Port is the TCP port.
	Port uint16
}

// ParseEndpoint parses HOST:PORT, IP:PORT, [IPv6]:PORT or CIDR:PORT ([CIDR]:PORT for IPv6).
// Wildcards are refused: a name with "*", an unspecified address (0.0.0.0, ::), a network
// of prefix length 0 and a port 0. Allowing everything is not a form of its own: name the
// networks (0.0.0.0/1 and 128.0.0.0/1 are two).
func ParseEndpoint(s string) (Endpoint, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("%q: not HOST:PORT: %w", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return Endpoint{}, fmt.Errorf("%q: port %q: not a number from 1 to 65535", s, port)
	}
	e := Endpoint{Port: uint16(p)}
	switch {
	case host == "":
		return Endpoint{}, fmt.Errorf("%q: no host", s)
	case strings.Contains(host, "*"):
		return Endpoint{}, fmt.Errorf("%q: wildcards are not allowed: name each host or network", s)
	case strings.Contains(host, "/"):
		pre, err := netip.ParsePrefix(host)
		if err != nil {
			return Endpoint{}, fmt.Errorf("%q: %w", s, err)
		}
		if pre.Bits() == 0 {
			return Endpoint{}, fmt.Errorf("%q: a network of every address is not allowed: name the networks", s)
		}
		if pre != pre.Masked() {
			return Endpoint{}, fmt.Errorf("%q: host bits set (did you mean %s?)", s, pre.Masked())
		}
		e.Prefix = pre
	default:
		// A name's final dot is the root's: "10.0.0.1." is the address 10.0.0.1.
		host = strings.TrimSuffix(host, ".")
		if addr, err := netip.ParseAddr(host); err == nil {
			if addr.IsUnspecified() || addr.Zone() != "" {
				return Endpoint{}, fmt.Errorf("%q: %s is not an address of one host", s, addr)
			}
			e.Prefix = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
			break
		}
		name := strings.ToLower(host)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return Endpoint{}, fmt.Errorf("%q: host %q: %s", s, host, strings.Join(errs, "; "))
		}
		e.Host = name
	}
	return e, nil
}

// String is the endpoint as ParseEndpoint reads it.
func (e Endpoint) String() string {
	port := strconv.Itoa(int(e.Port))
	switch {
	case e.Host != "":
		return net.JoinHostPort(e.Host, port)
	case e.Prefix.IsSingleIP():
		return net.JoinHostPort(e.Prefix.Addr().String(), port)
	default:
		return net.JoinHostPort(e.Prefix.String(), port)
	}
}

// endpointStrings are the endpoints as ParseEndpoint reads them.
func endpointStrings(endpoints []Endpoint) []string {
	out := make([]string, len(endpoints))
	for i, e := range endpoints {
		out[i] = e.String()
	}
	return out
}

// resolvedEndpoint is an Endpoint whose name the runner resolved for one run.
type resolvedEndpoint struct {
	Endpoint
	prefixes []netip.Prefix // Prefix, or one single-address prefix per address of Host
}

// allowedTo is the per-connection decision: a connection to dst goes through only when an
// endpoint allows its address and port.
type allowedTo []resolvedEndpoint

func (a allowedTo) allows(dst netip.AddrPort) bool {
	addr := dst.Addr().Unmap()
	for _, e := range a {
		if e.Port != dst.Port() {
			continue
		}
		for _, p := range e.prefixes {
			if p.Contains(addr) {
				return true
			}
		}
	}
	return false
}

// resolveEgress resolves the endpoints' names in the runner's network. A name that does
// not resolve fails the run before the operator starts.
func resolveEgress(ctx context.Context, endpoints []Endpoint, lookup func(context.Context, string) ([]netip.Addr, error)) (allowedTo, error) {
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	out := make(allowedTo, 0, len(endpoints))
	for _, e := range endpoints {
		r := resolvedEndpoint{Endpoint: e}
		if e.Host == "" {
			r.prefixes = []netip.Prefix{e.Prefix}
		} else {
			addrs, err := lookup(ctx, e.Host)
			if err != nil {
				return nil, fmt.Errorf("egress %s: %w", e, err)
			}
			for _, a := range addrs {
				a = a.Unmap()
				r.prefixes = append(r.prefixes, netip.PrefixFrom(a, a.BitLen()))
			}
			slices.SortFunc(r.prefixes, func(x, y netip.Prefix) int { return x.Addr().Compare(y.Addr()) })
			r.prefixes = slices.Compact(r.prefixes)
		}
		out = append(out, r)
	}
	return out, nil
}

// routes are the destinations the sandbox routes to its loopback interface, sorted.
func (a allowedTo) routes() []netip.Prefix {
	var out []netip.Prefix
	for _, e := range a {
		out = append(out, e.prefixes...)
	}
	slices.SortFunc(out, func(x, y netip.Prefix) int {
		if c := x.Addr().Compare(y.Addr()); c != 0 {
			return c
		}
		return x.Bits() - y.Bits()
	})
	return slices.Compact(out)
}

// listeners are the sandbox's listening addresses: one wildcard address per family and
// port ("0.0.0.0:443", "[::]:443"); which destination a connection was for is its local
// address, checked by allows.
func (a allowedTo) listeners() []string {
	var out []string
	for _, e := range a {
		for _, p := range e.prefixes {
			wildcard := "0.0.0.0"
			if p.Addr().Is6() {
				wildcard = "::"
			}
			out = append(out, net.JoinHostPort(wildcard, strconv.Itoa(int(e.Port))))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hosts is the sandbox's /etc/hosts: localhost, and every name with the addresses the
// runner resolved; empty when no endpoint is a name.
func (a allowedTo) hosts() string {
	var b strings.Builder
	for _, e := range a {
		if e.Host == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("# written by topolayer: the names operators[].egress allows\n127.0.0.1\tlocalhost\n::1\tlocalhost\n")
		}
		for _, p := range e.prefixes {
			fmt.Fprintf(&b, "%s\t%s\n", p.Addr(), e.Host)
		}
	}
	return b.String()
}

// noProxy is NO_PROXY where there is no network namespace: proxy-aware clients reach the
// allowed endpoints directly and everything else through the refusing proxy.
func noProxy(endpoints []Endpoint) string {
	var hosts []string
	for _, e := range endpoints {
		if e.Host != "" {
			hosts = append(hosts, e.Host)
		} else if e.Prefix.IsSingleIP() {
			hosts = append(hosts, e.Prefix.Addr().String())
		} else {
			hosts = append(hosts, e.Prefix.String())
		}
	}
	slices.Sort(hosts)
	return strings.Join(slices.Compact(hosts), ",")
}

// egressDialTimeout bounds the runner's connection to an allowed endpoint.
const egressDialTimeout = 30 * time.Second

// Limits of one operator's egress proxy, which runs in the runner's process: an operator
// that opens connections without end costs the runner at most maxEgressConns of them at a
// time (two descriptors and two goroutines each), and at most maxRefusedWaiting of those
// wait refuseWait for a request.
const (
	// refuseWait bounds how long a refused connection waits for the operator's first
	// bytes before it is reset; a protocol where the server speaks first waits this long.
	refuseWait = time.Second
	// maxEgressConns bounds the connections from the sandbox the proxy holds at a time;
	// one more is reset at once.
	maxEgressConns = 256
	// maxRefusedWaiting bounds the refused connections that wait for their request; one
	// more is reset at once.
	maxRefusedWaiting = 32
)

// egressProxy accepts the connections the operator makes in its sandbox (on listeners the
// sandbox's init created there and handed over) and, for each whose destination is
// allowed, connects to that destination from the runner's network and copies both ways.
// Any other connection is reset.
type egressProxy struct {
	allow allowedTo
	op    string
	log   func(msg string, kv ...any)
	// slots and waiting hold a token per connection from the sandbox the proxy holds, and
	// per refused connection that waits for its request (the limits above; tests make
	// them small).
	slots, waiting chan struct{}
	refuseWait     time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	lns    []net.Listener
}

func newEgressProxy(op string, allow allowedTo, log func(string, ...any)) *egressProxy {
	return &egressProxy{
		allow: allow, op: op, log: log, conns: map[net.Conn]struct{}{},
		slots: make(chan struct{}, maxEgressConns), waiting: make(chan struct{}, maxRefusedWaiting), refuseWait: refuseWait,
	}
}

// serve accepts on ln until the proxy is closed.
func (p *egressProxy) serve(ctx context.Context, ln net.Listener) {
	if !p.track(ln) {
		ln.Close()
		return
	}
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !p.trackConn(c) {
				c.Close()
				return
			}
			select {
			case p.slots <- struct{}{}:
				p.wg.Go(func() {
					defer func() { <-p.slots }()
					p.forward(ctx, c)
				})
			default:
				p.log("egress refused: too many connections", "limit", cap(p.slots))
				p.untrack(c)
				resetNow(c)
			}
		}
	}()
}

func (p *egressProxy) track(ln net.Listener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.lns = append(p.lns, ln)
	p.wg.Add(1) // under the lock: close cannot be waiting yet
	return true
}

func (p *egressProxy) trackConn(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *egressProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// forward decides for one connection and copies it to its destination.
func (p *egressProxy) forward(ctx context.Context, in net.Conn) {
	defer p.untrack(in)
	defer in.Close()
	local, ok := in.LocalAddr().(*net.TCPAddr)
	if !ok {
		return
	}
	dst := local.AddrPort()
	dst = netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
	// A connection that does not go through is reset, as a refused connect would be: the
	// operator sees "connection reset by peer", not an empty answer. The reset waits for
	// the operator's first bytes (for at most refuseWait): a reset that meets the
	// operator's write is reported by that write, and its read then ends as if the
	// connection were closed cleanly ("EOF"). Once the request is written, the reset is
	// reported by the read, the one call left. Beyond maxRefusedWaiting waiting, the
	// reset is at once.
	reset := func() {
		select {
		case p.waiting <- struct{}{}:
			_ = in.SetReadDeadline(time.Now().Add(p.refuseWait))
			_, _ = in.Read(make([]byte, 512))
			<-p.waiting
		default:
		}
		resetNow(in)
	}
	if !p.allow.allows(dst) {
		p.log("egress refused: not in operators[].egress", "endpoint", dst.String())
		reset()
		return
	}
	out, err := (&net.Dialer{Timeout: egressDialTimeout}).DialContext(ctx, "tcp", dst.String())
	if err != nil {
		p.log("egress failed", "endpoint", dst.String(), "error", err.Error())
		reset()
		return
	}
	if !p.trackConn(out) {
		out.Close()
		return
	}
	defer p.untrack(out)
	defer out.Close()
	p.log("egress", "endpoint", dst.String())
	var copies sync.WaitGroup
	copies.Go(func() { pipe(out, in) })
	copies.Go(func() { pipe(in, out) })
	copies.Wait()
}

// resetNow makes the close of c that follows a reset (SO_LINGER 0), and closes it.
func resetNow(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// pipe copies src to dst, then half-closes dst's write side.
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = dst.Close()
	}
}

// close stops accepting, closes every connection and waits for the copies to end.
func (p *egressProxy) close() {
	p.mu.Lock()
	p.closed = true
	for _, ln := range p.lns {
		ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Errors of an operator that needed a network its sandbox does not give: Go's dialer and
// resolver, and the C library's.
var (
	networkFailure = regexp.MustCompile(`network is unreachable|no route to host|no such host|server misbehaving|Temporary failure in name resolution|Name or service not known|lookup [^ ]+ on [^ ]+: .*(i/o timeout|connection refused)`)
	quotedURL      = regexp.MustCompile(`"((?:https?|wss?|ldaps?)://[^"\s]+)"`)
	dialAddr       = regexp.MustCompile(`dial (?:tcp|tcp4|tcp6|udp) ([^\s:]+:\d+|\[[0-9a-fA-F:.]+\]:\d+): `)
	lookupName     = regexp.MustCompile(`lookup ([A-Za-z0-9._-]+)[ :]`)
)

// NetworkNeeds reads an operator's output (its stderr, its controllers' errors) for the
// failures its sandbox's missing network causes ("network is unreachable", a name that
// does not resolve) and returns the destinations it tried, as HOST:PORT where the port can
// be told (from a URL, or the address dialed), else HOST; sorted, without repeats.
func NetworkNeeds(output string) []string {
	var needs []string
	for line := range strings.Lines(output) {
		if !networkFailure.MatchString(line) {
			continue
		}
		if m := quotedURL.FindStringSubmatch(line); m != nil {
			if u, err := url.Parse(m[1]); err == nil && u.Hostname() != "" {
				port := u.Port()
				if port == "" {
					port = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ldap": "389", "ldaps": "636"}[u.Scheme]
				}
				needs = append(needs, net.JoinHostPort(u.Hostname(), port))
				continue
			}
		}
		// A name that did not resolve: the address dialed after it is the DNS server's.
		if m := lookupName.FindStringSubmatch(line); m != nil {
			needs = append(needs, m[1])
			continue
		}
		if m := dialAddr.FindStringSubmatch(line); m != nil {
			needs = append(needs, m[1])
		}
	}
	slices.Sort(needs)
	return slices.Compact(needs)
}

// errEgressSetup marks a failure of the sandbox's init to give the operator its egress.
var errEgressSetup = errors.New("egress setup")
