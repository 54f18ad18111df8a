//go:build linux

package runner

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// InitArg is the first argument that makes a program the sandbox's init. An Exec with
// Egress starts the running program again (os.Executable) as
//
//	<program> __topolayer-sandbox-init SPEC -- OPERATOR ARGS...
//
// in the operator's new namespaces, so a program that runs such an Exec calls RunInit from
// main, before anything else, when os.Args[1] is InitArg (topolayer's main and the test
// binaries that run one do).
const InitArg = "__topolayer-sandbox-init"

// initSpec is what the init does before it becomes the operator.
type initSpec struct {
	// Routes are made local on the loopback interface: a connection to any of their
	// addresses reaches the listeners.
	Routes []string `json:"routes,omitempty"`
	// Listen are the TCP addresses (wildcard, per family and port) whose listening sockets
	// are handed to the runner.
	Listen []string `json:"listen,omitempty"`
	// Hosts, when set, is a file bind-mounted over /etc/hosts (the init is in a mount
	// namespace of its own).
	Hosts string `json:"hosts,omitempty"`
	// Memory, when positive, is RLIMIT_AS, set just before the operator's exec.
	Memory int64 `json:"memory,omitempty"`
	// RunnerMountNS is the runner's mount namespace (/proc/self/ns/mnt): the init mounts
	// only in another.
	RunnerMountNS string `json:"runnerMountNS,omitempty"`
}

// initControlFD is the descriptor of the init's end of the control socket (ExtraFiles[0]).
const initControlFD = 3

// initCaps are the capabilities the init holds, as ambient capabilities in its user
// namespace only, and drops before it becomes the operator: set its loopback interface up
// and route to it (NET_ADMIN), listen on ports below 1024 (NET_BIND_SERVICE), mount its
// /etc/hosts (SYS_ADMIN, in its own mount namespace).
var initCaps = []uintptr{unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE, unix.CAP_SYS_ADMIN}

// initExit is the init's exit code when it could not give the operator its network.
const initExit = 125

// RunInit is the sandbox's init (see InitArg); args are os.Args[2:]. It makes the
// endpoints' routes local on the loopback interface, listens on their ports, hands the
// listening sockets to the runner over its control socket, drops its capabilities and
// replaces itself with the operator: the operator keeps its pid, its process group, and
// its exit status and signals are the runner's to see. It returns only on failure, with
// the exit code to exit with.
func RunInit(args []string) int {
	reported := false // the runner has its answer; the control socket is closed
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "topolayer sandbox init:", err)
		if !reported {
			_ = unix.Sendmsg(initControlFD, []byte("error: "+err.Error()), nil, nil, 0)
		}
		return initExit
	}
	if len(args) < 3 || args[1] != "--" || !filepath.IsAbs(args[2]) {
		return fail(errors.New("usage: " + InitArg + " SPEC -- /PATH/TO/COMMAND [ARGS...]"))
	}
	var spec initSpec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		return fail(fmt.Errorf("spec: %w", err))
	}
	argv := args[2:]
	if err := inSandbox(spec); err != nil {
		return fail(err)
	}
	if spec.Hosts != "" {
		// Nothing mounted here propagates out of the mount namespace.
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fail(fmt.Errorf("make / private: %w", err))
		}
		if err := unix.Mount(spec.Hosts, "/etc/hosts", "", unix.MS_BIND, ""); err != nil {
			return fail(fmt.Errorf("mount %s on /etc/hosts: %w", spec.Hosts, err))
		}
	}
	if err := loopbackUp(); err != nil {
		return fail(err)
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return fail(err)
	}
	for _, r := range spec.Routes {
		p, err := netip.ParsePrefix(r)
		if err != nil {
			return fail(fmt.Errorf("route %q: %w", r, err))
		}
		if err := addLocalRoute(p, lo.Index); err != nil {
			return fail(fmt.Errorf("route %s to lo: %w", p, err))
		}
	}
	fds := make([]int, 0, len(spec.Listen))
	for _, addr := range spec.Listen {
		network := "tcp4"
		if strings.HasPrefix(addr, "[") {
			network = "tcp6"
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			return fail(err)
		}
		f, err := ln.(*net.TCPListener).File()
		if err != nil {
			return fail(fmt.Errorf("listen %s: %w", addr, err))
		}
		fds = append(fds, int(f.Fd()))
	}
	if err := unix.Sendmsg(initControlFD, []byte("ok"), unix.UnixRights(fds...), nil, 0); err != nil {
		return fail(fmt.Errorf("hand the listeners to the runner: %w", err))
	}
	// The operator holds none of them: the runner alone accepts.
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
	_ = unix.Close(initControlFD)
	reported = true
	// Capabilities and the exec are per thread: this thread drops them and execs.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("drop ambient capabilities: %w", err))
	}
	if spec.Memory > 0 {
		lim := uint64(spec.Memory)
		if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: lim, Max: lim}); err != nil {
			return fail(fmt.Errorf("set memory limit: %w", err))
		}
	}
	err = syscall.Exec(argv[0], argv, os.Environ())
	return fail(fmt.Errorf("exec %s: %w", argv[0], err))
}

// inSandbox refuses to run anywhere but where the runner starts the init: with its control
// socket, in a network namespace of its own (one interface, lo, down), and, to mount, in a
// mount namespace other than the runner's. Run by hand on a host, the init changes nothing.
func inSandbox(spec initSpec) error {
	if typ, err := unix.GetsockoptInt(initControlFD, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_SEQPACKET {
		return fmt.Errorf("not started by the runner: descriptor %d is not its control socket", initControlFD)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	if len(ifs) != 1 || ifs[0].Name != "lo" || ifs[0].Flags&net.FlagUp != 0 {
		return errors.New("not in a network namespace of its own: refusing to change the network")
	}
	if spec.Hosts != "" {
		self, err := os.Readlink("/proc/self/ns/mnt")
		if err != nil {
			return err
		}
		if spec.RunnerMountNS == "" || self == spec.RunnerMountNS {
			return errors.New("not in a mount namespace of its own: refusing to mount /etc/hosts")
		}
	}
	return nil
}

// loopbackUp sets the loopback interface up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}

// addLocalRoute adds `local PREFIX dev lo table local` over rtnetlink: every address of
// the prefix is then this namespace's own. A route that exists already (127.0.0.0/8) is
// not an error.
func addLocalRoute(p netip.Prefix, ifindex int) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	family := unix.AF_INET
	if p.Addr().Is6() {
		family = unix.AF_INET6
	}
	addr := p.Addr().AsSlice()
	attr := func(typ uint16, data []byte) []byte {
		l := unix.SizeofRtAttr + len(data)
		b := make([]byte, rtaAlign(l))
		binary.NativeEndian.PutUint16(b[0:], uint16(l))
		binary.NativeEndian.PutUint16(b[2:], typ)
		copy(b[unix.SizeofRtAttr:], data)
		return b
	}
	oif := binary.NativeEndian.AppendUint32(nil, uint32(ifindex))
	body := []byte{byte(family), byte(p.Bits()), 0, 0, unix.RT_TABLE_LOCAL, unix.RTPROT_BOOT, unix.RT_SCOPE_HOST, unix.RTN_LOCAL, 0, 0, 0, 0}
	body = append(body, attr(unix.RTA_DST, addr)...)
	body = append(body, attr(unix.RTA_OIF, oif)...)
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_NEWROUTE)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	binary.NativeEndian.PutUint32(msg[8:], 1) // sequence
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
			continue
		}
		switch errno := -int32(binary.NativeEndian.Uint32(m.Data)); errno {
		case 0, int32(unix.EEXIST):
			return nil
		default:
			return syscall.Errno(errno)
		}
	}
	return errors.New("no acknowledgment from rtnetlink")
}

func rtaAlign(n int) int { return (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1) }

// egressRun is the runner's side of one run's egress: the init's command line, the
// control socket and the files to remove.
type egressRun struct {
	allow   allowedTo
	spec    initSpec
	parent  *os.File // the runner's end of the control socket
	child   *os.File // the init's end, its descriptor 3
	tempDir string
}

// prepareEgress resolves the endpoints and prepares what the init needs.
func (e *Exec) prepareEgress(ctx context.Context) (*egressRun, error) {
	allow, err := resolveEgress(ctx, e.Egress, e.lookup)
	if err != nil {
		return nil, err
	}
	r := &egressRun{allow: allow}
	for _, p := range allow.routes() {
		if !p.Addr().IsLoopback() || p.Addr().Is6() {
			r.spec.Routes = append(r.spec.Routes, p.String())
		}
	}
	r.spec.Listen = allow.listeners()
	if hosts := allow.hosts(); hosts != "" {
		if r.tempDir, err = os.MkdirTemp("", "topolayer-egress-"); err != nil {
			return nil, err
		}
		r.spec.Hosts = filepath.Join(r.tempDir, "hosts")
		if r.spec.RunnerMountNS, err = os.Readlink("/proc/self/ns/mnt"); err != nil {
			r.close()
			return nil, err
		}
		if err := os.WriteFile(r.spec.Hosts, []byte(hosts), 0o644); err != nil {
			r.close()
			return nil, err
		}
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	r.parent, r.child = os.NewFile(uintptr(fds[0]), "egress-control"), os.NewFile(uintptr(fds[1]), "egress-control-init")
	return r, nil
}

// command returns the init's argv around the operator's and the SysProcAttr additions.
func (r *egressRun) command(self string, argv []string, memory int64) ([]string, error) {
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("egress: the sandbox's init: %w", err)
		}
	}
	spec := r.spec
	spec.Memory = memory
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	return append([]string{self, InitArg, string(data), "--"}, argv...), nil
}

// attr adds the init's needs to a SysProcAttr that creates user and network namespaces.
func (r *egressRun) attr(a *syscall.SysProcAttr) {
	a.AmbientCaps = initCaps
	if r.spec.Hosts != "" {
		a.Cloneflags |= syscall.CLONE_NEWNS
	}
}

// started closes the init's end in the runner and, in the background, receives the
// listeners and serves them until stop. The returned channel yields the init's error
// (nil once the listeners are served).
func (r *egressRun) started(ctx context.Context, p *egressProxy) <-chan error {
	r.child.Close()
	done := make(chan error, 1)
	go func() {
		lns, err := r.receive()
		if err != nil {
			done <- err
			return
		}
		for _, ln := range lns {
			p.serve(ctx, ln)
		}
		done <- nil
	}()
	return done
}

// receive reads the init's message: "ok" and the listening sockets, or "error: ...".
func (r *egressRun) receive() ([]net.Listener, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4*len(r.spec.Listen)))
	n, oobn, flags, _, err := unix.Recvmsg(int(r.parent.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errEgressSetup, err)
	}
	var fds []int
	if oobn > 0 {
		cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errEgressSetup, err)
		}
		for _, c := range cmsgs {
			got, err := unix.ParseUnixRights(&c)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", errEgressSetup, err)
			}
			fds = append(fds, got...)
		}
	}
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "egress-listener")
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	msg := string(buf[:n])
	switch {
	case n == 0:
		return nil, fmt.Errorf("%w: the init exited before it handed over its listeners", errEgressSetup)
	case msg != "ok":
		return nil, fmt.Errorf("%w: %s", errEgressSetup, strings.TrimPrefix(msg, "error: "))
	case flags&unix.MSG_CTRUNC != 0 || len(fds) != len(r.spec.Listen):
		return nil, fmt.Errorf("%w: %d listeners handed over, want %d", errEgressSetup, len(fds), len(r.spec.Listen))
	}
	lns := make([]net.Listener, 0, len(files))
	for _, f := range files {
		ln, err := net.FileListener(f) // a copy: the deferred Close closes the original
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("%w: %w", errEgressSetup, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// close releases the control socket and the hosts file.
func (r *egressRun) close() {
	if r.parent != nil {
		r.parent.Close()
		r.child.Close()
	}
	if r.tempDir != "" {
		os.RemoveAll(r.tempDir)
	}
}
