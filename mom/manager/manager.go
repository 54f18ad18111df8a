package manager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/mom/index"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/internal/mom/scheduler"
	"github.com/topolayer/topolayer/topology"
)

// Operator is one operator the Manager runs.
type Operator struct {
	// Name names the operator: its label value, field manager, status object and metrics.
	Name string
	// Runner runs it: a contract binary (runner.Exec) or a Go function (runner.InProcess).
	Runner runner.Runner
	// ServiceAccount, NAMESPACE/NAME, is impersonated by every write of its plans; empty
	// writes as the manager's own identity.
	ServiceAccount string
	// Controllers, when set, are the only controllers its runs start.
	Controllers []string
	// Supplements add to the declarations the operator prints (Declare merges them).
	Supplements config.Supplements
	// OnControllerFailure is what a run that exited non-zero with readable outputs and
	// controller results applies; "" means config.ApplyOnControllerFailure.
	OnControllerFailure config.ControllerFailurePolicy
	// Adopt, when not nil, makes its writes adopt existing objects without topolayer's
	// marks (config.Operator.Adopt); nil refuses them where the topology requires ownership.
	Adopt *config.Adoption
	// Resync, when positive, runs it again that long after its last run when nothing it
	// reads changed (config.Operator.Resync; trigger TriggerResync).
	Resync time.Duration
	// Draws is how many times a run that follows a change runs it on the same inputs, the
	// draw that wrote the most applied (config.Operator.Draws); 0 or 1: once.
	Draws int
	// EnvFromInputs are variables of its runs' environment read from its gathered inputs
	// (config.Operator.EnvFromInputs); each object must be among its declared inputs.
	EnvFromInputs []config.InputEnvVar
}

// Options configures a Manager.
type Options struct {
	// Topology is the placement of the configuration (topology.New): the clusters, the
	// engines, where inputs live, the targets and where status goes.
	Topology *topology.Topology
	// Operators are the operators to run.
	Operators []Operator
	// Declarations are the operators' declarations, by name, as Declare returns them; New
	// asks the operators for those missing.
	Declarations map[string]Declarations
	// Clusters are the topology's clusters by name (Topology.Clusters): their caches hold
	// the inputs, their configurations write the plans. A controller-runtime Manager is a
	// Cluster. The home cluster is required; the others may be late (Late).
	Clusters map[string]cluster.Cluster
	// Late are the clusters of the topology that Clusters lacks, each with what its client
	// configuration waits for, as the status objects say it ("the Secret ns/name does not
	// exist yet"). The Manager starts and connects them when Connect gives their
	// configuration; until then the operators wait, and their status objects say so
	// (ResultWaiting).
	Late map[string]string
	// WorkDir holds the runs' input and output directories; each run's are removed after
	// it, the last failed run's are kept for inspection. "" means a temporary directory the
	// Manager removes when Start returns: the runs' inputs hold the Secrets the operators
	// read, which must not outlive the process.
	WorkDir string
	// Scheduler bounds the runs; its Registerer and Observer are set by the Manager.
	Scheduler scheduler.Options
	// Registerer receives the Manager's and the scheduler's metrics (nil: none).
	Registerer prometheus.Registerer
	// Recorder records Kubernetes events about runs (nil: none).
	Recorder events.EventRecorder
	// Now is the clock of --now and of status times; nil means time.Now.
	Now func() time.Time
	// StatusQuiet is how long an operator's runs must be quiet before the status record of
	// a run that changed objects but not the outcome is written (see StatusName); 0 means
	// DefaultStatusQuiet.
	StatusQuiet time.Duration
	// RefreshClock is the clock of the guest kubeconfigs' token issue and refresh times
	// (package guestidentity); nil means the real clock.
	RefreshClock clock.WithTicker
}

// Manager runs operators when their inputs change: one set of informers over the union of
// their inputs, a scheduler, and for each run gather → run → filter → translate → apply.
// It is a controller-runtime Runnable that needs leader election.
type Manager struct {
	opts      Options
	log       logr.Logger
	topo      *topology.Topology
	status    topology.Status
	owner     *metav1.OwnerReference
	ops       map[string]*operatorState
	order     []string
	ix        *index.Index
	scheduler *scheduler.Scheduler
	metrics   *metrics
	// watches are the informers the operators' inputs need (Watches).
	watches []Watch
	// readersOf are the operators that read each watched resource, by cluster and resource.
	readersOf map[watchKey][]string
	// informed are the objects each fixed cluster's informers hold, for the targets to
	// skip the writes they show unchanged without a request (a connection adds the late
	// clusters').
	informed map[string]*informed

	// conn is the current connection; nil until every late cluster is connected.
	connMu sync.RWMutex
	conn   *connection
	// lateConfigs are the latest configurations Connect gave, by late cluster.
	lateMu        sync.Mutex
	lateConfigs   map[string]*rest.Config
	connectSignal chan struct{}

	// statusWriter writes the status objects.
	statusWriter statusWriter

	// ownWorkDir says New made opts.WorkDir, and Start removes it when it returns.
	ownWorkDir bool

	// refresher rewrites the guest kubeconfig Secrets before their tokens expire.
	refresher *guestidentity.Refresher

	mu     sync.Mutex
	writes *index.Writes

	// profile is what the runs plan with: the HostedControlPlane the hypershift profile
	// reads and the engines built with it, replaced whole when it changes.
	profileMu sync.RWMutex
	profile   *profile
}

// operatorState is what the Manager knows of one operator.
type operatorState struct {
	Operator
	inputs  *contract.InputResources
	outputs *contract.OutputResources

	mu   sync.Mutex
	runs int64
	// written holds the resourceVersions the operator's recent writes left: a change that
	// carries one of them is the operator's own.
	written *ownWrites
	// applying is set while a plan of the operator is being written. Changes of the objects
	// it reads that arrive meanwhile are held until the writes are known: a watch event can
	// arrive before the write that caused it has returned.
	applying bool
	held     []heldChange
	// reported is what its status object and events last said.
	reported reported
	// pending is the record its status object does not hold yet (deferStatus).
	pending pendingStatus
	// placed are the standalone identities its applied plans wrote and did not delete
	// since the manager started, in the order first written (leftBehind).
	placed []contract.Identity
}

// heldChange is a change that arrived while its operator was applying a plan.
type heldChange struct {
	key, resourceVersion string
	cause                scheduler.Cause
}

// New asks every operator for its declarations, builds their engines and targets, and
// reports the objects that two operators declare they write (as errors: a conflict refuses
// to start). It does not start anything.
func New(ctx context.Context, opts Options) (_ *Manager, err error) {
	if opts.Topology == nil {
		return nil, errors.New("manager: a topology is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ownWorkDir := opts.WorkDir == ""
	if ownWorkDir {
		dir, mkErr := os.MkdirTemp("", "topolayer-runs-")
		if mkErr != nil {
			return nil, mkErr
		}
		opts.WorkDir = dir
		defer func() {
			if err != nil {
				_ = os.RemoveAll(dir)
			}
		}()
	}
	topo := opts.Topology
	if opts.Clusters[topo.Home()] == nil {
		return nil, fmt.Errorf("manager: no cluster %s", topo.Home())
	}
	for _, c := range topo.Clusters() {
		_, late := opts.Late[c]
		if opts.Clusters[c] == nil && !late {
			return nil, fmt.Errorf("manager: no cluster %s", c)
		}
	}
	if opts.RefreshClock == nil {
		opts.RefreshClock = clock.RealClock{}
	}
	m := &Manager{opts: opts, ownWorkDir: ownWorkDir, log: logr.FromContextOrDiscard(ctx).WithName("manager"), topo: topo, status: topo.Status(),
		ops: map[string]*operatorState{}, ix: index.New(), writes: index.NewWrites(),
		informed: map[string]*informed{}, refresher: guestidentity.NewRefresher(opts.RefreshClock),
		lateConfigs: map[string]*rest.Config{}, connectSignal: make(chan struct{}, 1)}
	for name, c := range opts.Clusters {
		m.informed[name] = newInformed(c.GetCache())
	}
	// The HostedControlPlane owns every object written in its namespace, status objects
	// included; it is read once for that. What the hypershift profile reads of it is read
	// now, before the first plan, and again whenever it changes (hostedControlPlaneChanged).
	hcp, err := topo.ReadHostedControlPlane(ctx, opts.Clusters[topo.Home()].GetConfig(), "")
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	var spec *hosted.HostedControlPlane
	if hcp != nil {
		m.owner = hosted.OwnerReference(hcp)
		if topo.ReadsHostedControlPlane() {
			if spec, err = hosted.ParseHostedControlPlane(hcp); err != nil {
				return nil, fmt.Errorf("manager: the hypershift profile cannot read it: %w", err)
			}
		}
	}
	if c := opts.Clusters[m.status.Cluster]; c != nil {
		m.statusWriter = c.GetClient()
	}
	var errs []error
	outputs := map[string]*contract.OutputResources{}
	for _, op := range opts.Operators {
		if _, dup := m.ops[op.Name]; dup || op.Name == "" || op.Runner == nil {
			errs = append(errs, fmt.Errorf("operator %q: a unique name and a runner are required", op.Name))
			continue
		}
		st, err := m.prepare(ctx, op)
		if err != nil {
			errs = append(errs, fmt.Errorf("operator %s: %w", op.Name, err))
			continue
		}
		m.ops[op.Name] = st
		m.order = append(m.order, op.Name)
		outputs[op.Name] = st.outputs
	}
	for _, c := range index.DeclaredConflicts(outputs) {
		errs = append(errs, fmt.Errorf("conflict: %s", c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if m.profile, err = m.newProfile(spec); err != nil {
		return nil, err
	}
	decl := map[string]Declarations{}
	for name, st := range m.ops {
		decl[name] = Declarations{Inputs: st.inputs, Outputs: st.outputs}
	}
	if m.watches, err = Watches(topo, decl); err != nil {
		return nil, err
	}
	if m.readersOf, err = readersOf(topo, decl); err != nil {
		return nil, err
	}
	if m.metrics, err = newMetrics(opts.Registerer); err != nil {
		return nil, err
	}
	sopts := opts.Scheduler
	sopts.Registerer = opts.Registerer
	sopts.Observer = m.observe
	if m.scheduler, err = scheduler.New(sopts, m.run); err != nil {
		return nil, err
	}
	return m, nil
}

// prepare reads one operator's declarations and indexes its inputs; its engine is built
// with the profile (newProfile).
func (m *Manager) prepare(ctx context.Context, op Operator) (*operatorState, error) {
	d, ok := m.opts.Declarations[op.Name]
	if !ok {
		all, err := Declare(ctx, []Operator{op})
		if err != nil {
			return nil, err
		}
		d = all[op.Name]
	}
	in, out := d.Inputs, d.Outputs
	if err := config.ValidateInputEnv(op.EnvFromInputs, in); err != nil {
		return nil, err
	}
	if err := m.ix.Add(op.Name, in); err != nil {
		return nil, err
	}
	if op.ServiceAccount != "" {
		if _, err := apply.ServiceAccountUser(op.ServiceAccount); err != nil {
			return nil, err
		}
	}
	return &operatorState{Operator: op, inputs: in, outputs: out, written: newOwnWrites()}, nil
}

// Operators returns the operators' names in configuration order.
func (m *Manager) Operators() []string { return slices.Clone(m.order) }

// Inputs returns what operator reads, as it declared it.
func (m *Manager) Inputs(operator string) *contract.InputResources {
	if st := m.ops[operator]; st != nil {
		return st.inputs
	}
	return nil
}

// Status returns the scheduler's view of one operator.
func (m *Manager) Status(operator string) scheduler.OperatorStatus {
	return m.scheduler.Status(operator)
}

// NeedLeaderElection makes only the leader run operators.
func (m *Manager) NeedLeaderElection() bool { return true }

// addToScheduler registers an operator with the scheduler, with its resync period.
func (m *Manager) addToScheduler(name string) {
	m.scheduler.AddOperator(name, scheduler.OperatorOptions{Resync: m.ops[name].Resync})
}

// Start watches the inputs, runs every operator once, then again whenever its inputs
// change, until ctx is done; it waits for the runs in progress before returning. With late
// clusters (Options.Late), the operators first wait for Connect to connect them. A watched
// resource that a cluster does not serve yet is watched once it does (its CRD created),
// and the operators that read it run then.
func (m *Manager) Start(ctx context.Context) error {
	ctx = logr.NewContext(ctx, m.log)
	sctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	for _, name := range slices.Sorted(maps.Keys(m.opts.Clusters)) {
		c := m.opts.Clusters[name]
		if err := m.watchCluster(sctx, ctx, c, m.informed[name], name); err != nil {
			return fmt.Errorf("cluster %s: %w", name, err)
		}
	}
	if len(m.opts.Late) == 0 {
		conn, err := m.newConnection(ctx, nil)
		if err != nil {
			return err
		}
		m.swap(conn)
		for _, name := range m.order {
			m.addToScheduler(name)
		}
	} else {
		why := m.waitingFor()
		m.log.Info("operators wait for the late clusters", "late", slices.Sorted(maps.Keys(m.opts.Late)), "reason", why)
		m.waiting(ctx, why)
		go m.connectLoop(ctx)
	}
	go func() { _ = m.refresher.Start(ctx) }()
	m.log.Info("running operators", "operators", m.order, "workDir", m.opts.WorkDir)
	err := m.scheduler.Start(ctx)
	m.flushAll(context.WithoutCancel(ctx))
	if m.ownWorkDir {
		// Every run has ended: nothing reads or writes the directory any more.
		if rmErr := os.RemoveAll(m.opts.WorkDir); rmErr != nil {
			m.log.Error(rmErr, "removing the work directory", "workDir", m.opts.WorkDir)
		}
	}
	return err
}
