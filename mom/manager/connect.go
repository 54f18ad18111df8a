package manager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/hosted/serviceca"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/gather"
	"github.com/topolayer/topolayer/internal/mom/scheduler"
	"github.com/topolayer/topolayer/topology"
)

// connection is what runs read and write the clusters through once every cluster of the
// topology is connected: each cluster, its gather reader and the informed cache of its
// watched objects, and each operator's targets and guest identity writer over those
// clusters. A late cluster's new client configuration (Connect) makes a new connection;
// a run holds the one it started with until it ends, and a replaced connection stops its
// late clusters once no run holds it.
type connection struct {
	// serial numbers the connections: 1 is the first.
	serial   int
	clusters map[string]cluster.Cluster
	readers  map[string]gather.Reader
	informed map[string]*informed
	// targets are each operator's apply targets, by operator and cluster.
	targets map[string]map[string]apply.Target
	// guests are each operator's guest identity writers (nil without a guest).
	guests map[string]*guestidentity.Writer
	// serviceCA fills the operands' service CA bundles (nil: the topology configures none).
	serviceCA *serviceca.Injector
	// stop stops the late clusters this connection started.
	stop context.CancelFunc
	// users counts the runs that hold the connection.
	users sync.WaitGroup
}

// connectTimeout bounds the start of a late cluster's connection: its cache started and
// the informers of its served watched resources synced.
const connectTimeout = time.Minute

// connectBackoff paces the attempts to connect a late cluster whose configuration does
// not work (the API server is unreachable, the token is refused).
var connectBackoff = scheduler.Backoff{Base: time.Second, Max: 30 * time.Second}

// Connect gives the Manager the client configuration of a late cluster (Options.Late): the
// first one connects it, and the operators, which waited for it, run; a later one replaces
// the connection (a rotated kubeconfig, a new token): new informers, readers and targets
// over the new configuration, every operator notified, and the old connection stopped once
// the runs that hold it end. Connect does not block; the connection is made by Start, with
// backoff while the configuration does not work. A nil cfg is ignored: a connection, once
// made, stays until a new configuration replaces it.
func (m *Manager) Connect(clusterName string, cfg *rest.Config) {
	if cfg == nil {
		return
	}
	m.lateMu.Lock()
	if _, ok := m.opts.Late[clusterName]; !ok {
		m.lateMu.Unlock()
		m.log.Error(fmt.Errorf("cluster %s is not a late cluster of the topology", clusterName), "connect ignored")
		return
	}
	m.lateConfigs[clusterName] = rest.CopyConfig(cfg)
	m.lateMu.Unlock()
	select {
	case m.connectSignal <- struct{}{}:
	default: // a signal is pending: it will read the latest configurations
	}
}

// Connected reports whether every cluster of the topology is connected: the operators run.
func (m *Manager) Connected() bool {
	m.connMu.RLock()
	defer m.connMu.RUnlock()
	return m.conn != nil
}

// acquire returns the current connection, held until release; nil before the first.
func (m *Manager) acquire() *connection {
	m.connMu.RLock()
	defer m.connMu.RUnlock()
	c := m.conn
	if c != nil {
		c.users.Add(1)
	}
	return c
}

// release ends a run's hold on c.
func (c *connection) release() { c.users.Done() }

// swap makes c the current connection and retires the previous one: it stops when no run
// holds it any more. It returns the previous one (nil for the first connection).
func (m *Manager) swap(c *connection) *connection {
	m.connMu.Lock()
	old := m.conn
	if old != nil {
		c.serial = old.serial + 1
	} else {
		c.serial = 1
	}
	m.conn = c
	m.connMu.Unlock()
	if old != nil {
		go func() {
			old.users.Wait()
			if old.stop != nil {
				old.stop()
			}
		}()
	}
	return old
}

// takeLateConfigs returns the latest configuration of every late cluster; ok is false while
// one of them has none yet.
func (m *Manager) takeLateConfigs() (map[string]*rest.Config, bool) {
	m.lateMu.Lock()
	defer m.lateMu.Unlock()
	if len(m.lateConfigs) < len(m.opts.Late) {
		return nil, false
	}
	return maps.Clone(m.lateConfigs), true
}

// connectLoop connects the late clusters whenever Connect gives them a configuration, until
// ctx is done. Attempts that fail are retried with backoff, with the latest configuration.
func (m *Manager) connectLoop(ctx context.Context) {
	var failures int
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.connectSignal:
			failures = 0
		case <-retry:
		}
		retry = nil
		configs, ok := m.takeLateConfigs()
		if !ok {
			continue
		}
		start := time.Now()
		conn, err := m.newConnection(ctx, configs)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			delay := backoffDelay(connectBackoff, failures)
			for name := range configs {
				m.metrics.connectFailures.WithLabelValues(name).Inc()
			}
			m.log.Error(err, "connect the late clusters: retrying", "clusters", slices.Sorted(maps.Keys(configs)), "retryIn", delay)
			m.waiting(ctx, fmt.Sprintf("connecting to the %s cluster failed (retried in %s): %v", lateNames(configs)[0], delay, err))
			retry = time.After(delay)
			continue
		}
		old := m.swap(conn)
		for name := range configs {
			m.metrics.connections.WithLabelValues(name).Inc()
		}
		m.log.Info("connected the late clusters", "clusters", slices.Sorted(maps.Keys(configs)), "connection", conn.serial, "took", time.Since(start).Round(time.Millisecond))
		if old == nil {
			for _, name := range m.order {
				m.addToScheduler(name)
			}
			continue
		}
		// A new connection may see another cluster (restored, replaced): every operator
		// runs over it once.
		for _, name := range m.order {
			for c := range configs {
				m.scheduler.Notify(name, connectCause(c))
			}
		}
	}
}

// lateNames returns the sorted names of the late clusters of configs.
func lateNames(configs map[string]*rest.Config) []string {
	return slices.Sorted(maps.Keys(configs))
}

// backoffDelay returns the delay of b after n consecutive failures.
func backoffDelay(b scheduler.Backoff, n int) time.Duration {
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// connectCause is the cause of the runs a new connection to cluster starts.
func connectCause(clusterName string) scheduler.Cause { return scheduler.Cause{Cluster: clusterName} }

// isConnectCause tells connectCause's causes apart from changes of objects and resyncs.
func isConnectCause(c scheduler.Cause) bool { return c.Resource == "" && c.Name == "" && !c.Resync }

// newConnection starts a connection: the fixed clusters as they are, and for each late
// cluster a controller-runtime cluster over its configuration, started under ctx, with the
// informers of its watched resources synced (kinds not served yet are retried for as long
// as the connection lives). On error nothing it started is left running.
func (m *Manager) newConnection(ctx context.Context, late map[string]*rest.Config) (_ *connection, err error) {
	conn := &connection{
		clusters: maps.Clone(m.opts.Clusters),
		readers:  map[string]gather.Reader{},
		informed: maps.Clone(m.informed),
		targets:  map[string]map[string]apply.Target{},
		guests:   map[string]*guestidentity.Writer{},
	}
	if len(late) > 0 {
		cctx, cancel := context.WithCancel(ctx)
		conn.stop = cancel
		defer func() {
			if err != nil {
				cancel()
			}
		}()
		for _, name := range lateNames(late) {
			c, err := m.startLate(cctx, name, late[name])
			if err != nil {
				return nil, err
			}
			conn.clusters[name] = c
			conn.informed[name] = newInformed(c.GetCache())
			sctx, cancelSync := context.WithTimeout(cctx, connectTimeout)
			err = m.watchCluster(sctx, cctx, c, conn.informed[name], name)
			cancelSync()
			if err != nil {
				return nil, fmt.Errorf("cluster %s: %w", name, err)
			}
		}
	}
	for name, c := range conn.clusters {
		conn.readers[name] = gather.ClientReader{Name: name, Reader: c.GetCache(), Mapper: c.GetRESTMapper()}
	}
	configs := map[string]*rest.Config{}
	caches := map[string]apply.Cache{}
	for name, c := range conn.clusters {
		configs[name] = c.GetConfig()
		caches[name] = conn.informed[name]
	}
	if conn.serviceCA, err = m.topo.ServiceCA(configs); err != nil {
		return nil, err
	}
	for _, name := range m.order {
		st := m.ops[name]
		user := ""
		if st.ServiceAccount != "" {
			if user, err = apply.ServiceAccountUser(st.ServiceAccount); err != nil {
				return nil, fmt.Errorf("operator %s: %w", name, err)
			}
		}
		targets, err := m.topo.Targets(ctx, configs, topology.TargetOptions{Operator: name, Impersonate: user, Owner: m.owner, Adopt: topology.AdoptionOf(st.Adopt, nil), Caches: caches})
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", name, err)
		}
		guest, err := m.topo.GuestIdentities(configs, name, m.owner, m.opts.RefreshClock)
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", name, err)
		}
		conn.targets[name], conn.guests[name] = targets, guest
	}
	return conn, nil
}

// startLate builds and starts the controller-runtime cluster of a late cluster over cfg,
// with the cache options of its watches; it runs until ctx is done.
func (m *Manager) startLate(ctx context.Context, name string, cfg *rest.Config) (cluster.Cluster, error) {
	c, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = Scheme()
		o.Cache = ClusterCacheOptions(m.topo, m.watches, name)
		o.NewCache = ClusterNewCache(m.topo, m.watches, name)
	})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	started := make(chan error, 1)
	go func() {
		if err := c.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
			logr.FromContextOrDiscard(ctx).Error(err, "late cluster stopped", "cluster", name)
			started <- err
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if !c.GetCache().WaitForCacheSync(sctx) {
		select {
		case err := <-started:
			return nil, fmt.Errorf("cluster %s: start: %w", name, err)
		default:
			return nil, fmt.Errorf("cluster %s: its cache did not start within %s", name, connectTimeout)
		}
	}
	return c, nil
}

// ResultWaiting is the result in the status objects of operators that wait for a late
// cluster: they have not run yet.
const ResultWaiting = "Waiting"

// waiting writes, for every operator, a status object that says the operator waits for
// the late clusters, and why. Operators that have run since (a connection was made) are
// left alone.
func (m *Manager) waiting(ctx context.Context, why string) {
	if m.Connected() || m.status.Namespace == "" || m.statusWriter == nil {
		return
	}
	for _, name := range m.order {
		st := m.ops[name]
		rec := RunRecord{Operator: name, Result: ResultWaiting, Message: why, Started: m.opts.Now().UTC().Format("2006-01-02T15:04:05Z"), Trigger: TriggerStart}
		key := statusKey(rec)
		st.mu.Lock()
		same := st.reported.status == key || st.runs > 0
		st.mu.Unlock()
		if same {
			continue
		}
		if m.writeStatus(ctx, st, rec) {
			st.mu.Lock()
			if st.runs == 0 {
				st.reported.status = key
			}
			st.mu.Unlock()
			m.event(name, "Normal", "Waiting", "%s", why)
		}
	}
}

// waitingFor says what the late clusters wait for, as the status objects say it.
func (m *Manager) waitingFor() string {
	names := slices.Sorted(maps.Keys(m.opts.Late))
	for _, name := range names {
		if what := m.opts.Late[name]; what != "" {
			return fmt.Sprintf("waiting for the %s cluster: %s", name, what)
		}
	}
	return fmt.Sprintf("waiting for the %s cluster's client configuration", names[0])
}
