package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/mom/manager"
)

// tcpProxy forwards loopback connections to an API server and can cut them: while down it
// closes every open connection and every new one at once, as an unreachable server's
// network would (connection reset).
type tcpProxy struct {
	l      net.Listener
	target string
	down   atomic.Bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// newTCPProxy starts a proxy to target (host:port) until the test ends.
func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		_ = l.Close()
		p.closeAll()
	})
	return p
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		if p.down.Load() {
			_ = c.Close()
			continue
		}
		go p.forward(c)
	}
}

// forward copies between c and a new connection to the target.
func (p *tcpProxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.track(c, s)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = s.Close()
	p.untrack(c, s)
}

func (p *tcpProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *tcpProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

func (p *tcpProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

// setDown cuts (true) or restores (false) the connection to the target.
func (p *tcpProxy) setDown(down bool) {
	p.down.Store(down)
	if down {
		p.closeAll()
	}
}

// via returns a copy of cfg that reaches its server through the proxy.
func (p *tcpProxy) via(t *testing.T, cfg *rest.Config) *rest.Config {
	t.Helper()
	c := rest.CopyConfig(cfg)
	u, err := url.Parse(c.Host)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.l.Addr().String()
	c.Host = u.String()
	return c
}

// guestWriterOperator reads the guest ConfigMap openshift-config/<settings> and writes its
// value into the Management ConfigMap openshift-mirror/<op> and the annotation
// topolayer.dev/value of a ClusterRole <op> on the guest: every plan needs the guest. It
// reads its own ConfigMap too, so that a change of it (on the management cluster) runs it.
func guestWriterOperator(op, settings string) manager.Operator {
	cm := func(ns, name string) contract.ExactResourceID {
		return contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: ns, Name: name}
	}
	inputs := &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{ExactResources: []contract.ExactResourceID{
		cm("openshift-config", settings), cm("openshift-mirror", op),
	}}}
	outputs := &contract.OutputResources{
		ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{cm("openshift-mirror", op)}},
		UserWorkloadResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
			{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, Name: op},
		}},
	}
	fn := fromValue(settings, "unset", func(v string) []contract.Mutation {
		ms := []contract.Mutation{
			valueConfigMap("openshift-mirror", op, v),
			mutation(contract.ClassUserWorkload, contract.ActionApply, "rbac.authorization.k8s.io/v1/clusterroles", "", op,
				"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: "+op+", annotations: {topolayer.dev/value: \""+v+"\"}}\nrules: []\n"),
		}
		for i := range ms {
			ms[i].Options = []byte("force: true\n") // take fields back from whoever edited them
		}
		return ms
	})
	return manager.Operator{Name: op, Runner: &runner.InProcess{Name: op, Func: fn, Inputs: inputs, Outputs: outputs}}
}

// TestManagerGuestOutage cuts the manager's connection to the guest for 30s (a TCP proxy
// of the test's own sits between them; other tests still reach the guest). Meanwhile an
// operator that writes only to the management cluster keeps converging (it restores its
// ConfigMap when the test tampers with it), and an operator whose plans write to the guest
// fails (reported, retried with backoff) without writing the management half of its plan.
// Once the guest is back, that operator converges to what a fresh run writes, including a
// guest change made during the outage.
func TestManagerGuestOutage(t *testing.T) {
	ctx := t.Context()
	m := newManagedHCP(t, "outage")
	healer, writer := "healer-"+m.sfx, "guest-writer-"+m.sfx
	settings, healed := "outage-"+m.sfx, "heal-"+m.sfx
	setGuestValue(t, m.guestCS, settings, "one")

	guestURL, err := url.Parse(hosted.Config(cluster.Guest).Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, guestURL.Host)
	ops := []manager.Operator{
		configMapOperator(healer, "openshift-heal", healed, true, func(string) string { return "healed" }),
		guestWriterOperator(writer, settings),
	}
	_, reg := startFaultManager(t, m.cfg, ops, faultManagerOptions{guest: proxy.via(t, hosted.Config(cluster.Guest))})
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		v, err := valueOf(context.Background(), m.mgmtCS, m.hcpNS, "openshift-mirror--"+writer)
		t.Logf("mirror: %q %v", v, err)
		if cr, err := m.guestCS.RbacV1().ClusterRoles().Get(context.Background(), writer, metav1.GetOptions{}); err == nil {
			t.Logf("ClusterRole annotations: %v", cr.Annotations)
		}
		for _, op := range []string{healer, writer} {
			st, err := m.mgmtCS.CoreV1().ConfigMaps(m.hcpNS).Get(context.Background(), manager.StatusName(op), metav1.GetOptions{})
			if err != nil {
				t.Logf("status of %s: %v", op, err)
				continue
			}
			t.Logf("status of %s:\n%s", op, st.Data["status.yaml"])
		}
	})

	mirrored := func(want string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			v, err := valueOf(ctx, m.mgmtCS, m.hcpNS, "openshift-mirror--"+writer)
			if err != nil || v != want {
				return false, err
			}
			cr, err := m.guestCS.RbacV1().ClusterRoles().Get(ctx, writer, metav1.GetOptions{})
			return err == nil && cr.Annotations["topolayer.dev/value"] == want, err
		}
	}
	waitLong(t, "the first runs", 30*time.Second, mirrored("one"))

	// The guest goes away for 30s.
	const outage = 30 * time.Second
	proxy.setDown(true)
	downAt := time.Now()
	t.Logf("guest unreachable for the manager from %s", downAt.Format(time.TimeOnly))
	failedBefore := runsWith(t, reg, writer, manager.ResultFailed)
	// A guest change the manager cannot see yet; management changes that run both operators.
	setGuestValue(t, m.guestCS, settings, "two")
	tamper := func(name string) {
		t.Helper()
		cm, err := m.mgmtCS.CoreV1().ConfigMaps(m.hcpNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["value"] = "tampered"
		if _, err := m.mgmtCS.CoreV1().ConfigMaps(m.hcpNS).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	healedIs := func(ctx context.Context) (bool, error) {
		v, err := valueOf(ctx, m.mgmtCS, m.hcpNS, "openshift-heal--"+healed)
		return v == "healed", err
	}
	// Neither half of a plan that cannot reach the guest is written: the management
	// ConfigMap stays as the test left it, the ClusterRole as the last plan did.
	unwritten := func(ctx context.Context) error {
		if v, err := valueOf(ctx, m.mgmtCS, m.hcpNS, "openshift-mirror--"+writer); err != nil || v != "tampered" {
			return fmt.Errorf("the management half of a plan that could not reach the guest was written: %q (%v)", v, err)
		}
		return nil
	}
	tamper("openshift-heal--" + healed)
	tamper("openshift-mirror--" + writer)
	waitLong(t, "the management-only operator restoring its ConfigMap during the outage", 10*time.Second, healedIs)
	// A run against the unreachable guest takes ~10s (client-go retries its requests).
	waitLong(t, "a failed run of the guest writer during the outage", 25*time.Second, func(ctx context.Context) (bool, error) {
		if err := unwritten(ctx); err != nil {
			return false, err
		}
		return runsWith(t, reg, writer, manager.ResultFailed)-failedBefore >= 1, nil
	})
	// Again, later in the outage: the healer still converges.
	time.Sleep(10 * time.Second)
	tamper("openshift-heal--" + healed)
	waitLong(t, "the management-only operator restoring its ConfigMap again", 10*time.Second, healedIs)
	if err := unwritten(ctx); err != nil {
		t.Error(err)
	}
	st, err := m.mgmtCS.CoreV1().ConfigMaps(m.hcpNS).Get(ctx, manager.StatusName(writer), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rec manager.RunRecord
	if err := yaml.Unmarshal([]byte(st.Data["status.yaml"]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Result != manager.ResultFailed || !strings.Contains(rec.Message, "apply") {
		t.Errorf("status of %s during the outage: %s %q", writer, rec.Result, rec.Message)
	}
	failedDuring := runsWith(t, reg, writer, manager.ResultFailed) - failedBefore
	t.Logf("status during the outage: %s: %s", rec.Result, rec.Message)
	t.Logf("RunFailed event: %s", eventReasons(t, m.hcpNS, writer)["RunFailed"])

	time.Sleep(time.Until(downAt.Add(outage)))
	proxy.setDown(false)
	upAt := time.Now()
	failedAll := runsWith(t, reg, writer, manager.ResultFailed) - failedBefore
	t.Logf("%v failed runs of %s in the %s outage (backoff: at most ~%d without it at a 100ms debounce)", failedAll, writer, outage, int(outage/(100*time.Millisecond)))
	if failedAll > 8 {
		t.Errorf("%v failed runs in %s: the retries do not back off", failedAll, outage)
	}
	_ = failedDuring

	// Back: the writer converges to a fresh run's state, with the guest change of the outage.
	waitLong(t, "convergence after the guest is back", 3*time.Minute, mirrored("two"))
	t.Logf("converged %s after the guest came back", time.Since(upAt).Round(100*time.Millisecond))
	waitLong(t, "a succeeded status", 30*time.Second, func(ctx context.Context) (bool, error) {
		st, err := m.mgmtCS.CoreV1().ConfigMaps(m.hcpNS).Get(ctx, manager.StatusName(writer), metav1.GetOptions{})
		return err == nil && st.Data["result"] == manager.ResultSucceeded, err
	})
}
