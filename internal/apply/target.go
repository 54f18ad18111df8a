package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/topolayer/topolayer/contract"
)

// Target applies planned mutations to one place: a cluster, or one namespace of one.
type Target interface {
	Name() string
	Apply(ctx context.Context, m contract.Mutation) (Result, error)
}

// DryRunner is a Target that can ask its server what a mutation would do without writing
// it. ApplyPlan validates every mutation of a plan on targets that are DryRunners.
type DryRunner interface {
	Target
	DryRun(ctx context.Context, m contract.Mutation) (Result, error)
}

// Change says what a write does (or would do) to the object.
type Change string

const (
	// ChangeCreate means the object did not exist.
	ChangeCreate Change = "create"
	// ChangeUpdate means the object existed and is changed.
	ChangeUpdate Change = "change"
	// ChangeNone means the write would not change the object (or the object to delete is
	// absent): it was skipped.
	ChangeNone Change = "unchanged"
	// ChangeDelete means the object existed and is deleted.
	ChangeDelete Change = "delete"
	// ChangeAdopt means the object existed without topolayer's marks and is taken over
	// (Options.Adopt): same object, its field ownership moved, topolayer's marks added.
	ChangeAdopt Change = "adopt"
	// ChangeFold means the Event to create repeats one the operator wrote before: that
	// Event is updated instead (count+1, lastTimestamp), as a resident recorder does.
	ChangeFold Change = "fold"
)

// Result is the outcome of one mutation on a target.
type Result struct {
	// Change is what the write did, or would do on a dry-run.
	Change Change
	// Skipped is true when nothing was sent because nothing would change.
	Skipped bool
	// Object is the object as the server stored it (or would store it); nil for deletes.
	Object *unstructured.Unstructured
	// Live is the object before the write; nil when it did not exist.
	Live *unstructured.Unstructured
	// Intermediate are the resourceVersions that requests of the write left before its
	// last one (the managedFields patch of an adoption), so that a watcher knows the
	// changes they cause as the write's own.
	Intermediate []string
}

// DefaultFieldManager is the field manager of Create and Update writes, and of Apply writes
// whose options and metadata name none.
const DefaultFieldManager = "topolayer"

// ErrOutsideNamespace is returned for a mutation outside the namespace a target is bound to.
var ErrOutsideNamespace = errors.New("outside the target's namespace")

// ClusterTarget is a Target over one API server, through a dynamic client and a RESTMapper
// built from discovery.
type ClusterTarget struct {
	name   string
	opts   Options
	client dynamic.Interface
	mapper meta.ResettableRESTMapper

	mu sync.Mutex
	// written are the objects this target's server-side applies left, by resource,
	// namespace and name: the next apply of one sends its resourceVersion as a
	// precondition instead of reading it first.
	written map[writtenKey]*unstructured.Unstructured
	// updated are this target's last updates (PUTs), by resource, subresource, namespace and
	// name: what was sent and the resourceVersion the server answered (updateMemory).
	updated map[updateKey]updateMemory
}

// updateKey names the object, or its status, of an update.
type updateKey struct {
	writtenKey
	subresource string
}

// updateMemory is the resourceVersion an update left, and the bodies sent since that the
// server stored as they were (at most maxUpdateBodies): an operator whose runs alternate
// between bodies that store the same object repeats each of them.
type updateMemory struct {
	sent            []*unstructured.Unstructured
	resourceVersion string
}

// maxUpdateBodies bounds the bodies an updateMemory keeps.
const maxUpdateBodies = 4

var _ DryRunner = (*ClusterTarget)(nil)

// DefaultQPS and DefaultBurst are the client-side rate limits of a target whose
// configuration sets none.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// NewClusterTarget builds the target named name (the plan's cluster name) over cfg. cfg is
// copied; with Options.Impersonate, the copy impersonates the service account. A cfg without
// rate limits gets DefaultQPS and DefaultBurst.
func NewClusterTarget(name string, cfg *rest.Config, opts Options) (*ClusterTarget, error) {
	if cfg == nil {
		return nil, fmt.Errorf("target %s: no client configuration", name)
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.Burst == 0 && cfg.RateLimiter == nil {
		// client-go's default (5 requests per second) makes a plan of a dozen entries, up to
		// three requests each (read, dry-run, write), take seconds.
		cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	}
	if opts.Impersonate != "" {
		if _, _, err := ParseServiceAccount(opts.Impersonate); err != nil {
			return nil, fmt.Errorf("target %s: impersonate: %w", name, err)
		}
		cfg.Impersonate = rest.ImpersonationConfig{UserName: opts.Impersonate}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	return &ClusterTarget{
		name:   name,
		opts:   opts.defaulted(),
		client: dyn,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
	}, nil
}

// Name returns the cluster name the target was built for.
func (t *ClusterTarget) Name() string { return t.name }

// Apply writes m, unless it is a conflict or would change nothing.
func (t *ClusterTarget) Apply(ctx context.Context, m contract.Mutation) (Result, error) {
	return t.write(ctx, m, false)
}

// DryRun asks the server what m would do (dryRun=All): nothing is written.
func (t *ClusterTarget) DryRun(ctx context.Context, m contract.Mutation) (Result, error) {
	return t.write(ctx, m, true)
}

// resource returns the client of m's resource (namespaced when its kind is) and its REST
// mapping, after checking the target's namespace bound.
func (t *ClusterTarget) resource(m contract.Mutation) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	gvr := m.Identity().GroupVersionResource()
	mapping, err := t.mapping(gvr)
	if err != nil {
		return nil, nil, err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	ns := m.Metadata.Namespace
	if t.opts.Namespace != "" && (!namespaced || ns != t.opts.Namespace) {
		return nil, nil, fmt.Errorf("%s: %w %s", m.Identity(), ErrOutsideNamespace, t.opts.Namespace)
	}
	if namespaced {
		if ns == "" {
			return nil, nil, fmt.Errorf("%s: %s is namespaced and the mutation names no namespace", m.Identity(), gvr.GroupResource())
		}
		return t.client.Resource(gvr).Namespace(ns), mapping, nil
	}
	return t.client.Resource(gvr), mapping, nil
}

// mapping finds the REST mapping of gvr, refreshing discovery once when the resource is
// unknown (a CRD installed since the last look).
func (t *ClusterTarget) mapping(gvr schema.GroupVersionResource) (*meta.RESTMapping, error) {
	find := func() (*meta.RESTMapping, error) {
		gvk, err := t.mapper.KindFor(gvr)
		if err != nil {
			return nil, err
		}
		return t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	mapping, err := find()
	if meta.IsNoMatchError(err) {
		t.mapper.Reset()
		mapping, err = find()
	}
	if err != nil {
		return nil, fmt.Errorf("resource %s: %w", gvr, err)
	}
	return mapping, nil
}

// write does m, for real or as a dry-run: the two passes of prepare and commit.
func (t *ClusterTarget) write(ctx context.Context, m contract.Mutation, dryRun bool) (Result, error) {
	level := askChanged
	if dryRun {
		level = askAll
	}
	w, res, err := t.prepare(ctx, m, nil, level, true)
	if err != nil || dryRun {
		return res, err
	}
	return w.commit(ctx)
}

// remember keeps obj, what a write of this target left on the server, so that the next
// server-side apply of it needs no read (see decide); recall returns it, forget drops it.
// Only the objects this target wrote are kept, one copy each.
func (t *ClusterTarget) remember(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.written == nil {
		t.written = map[writtenKey]*unstructured.Unstructured{}
	}
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	t.written[writtenKey{gvr, obj.GetNamespace(), obj.GetName()}] = c
}

func (t *ClusterTarget) recall(gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o := t.written[writtenKey{gvr, namespace, name}]; o != nil {
		return o.DeepCopy()
	}
	return nil
}

func (t *ClusterTarget) forget(gvr schema.GroupVersionResource, namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.written, writtenKey{gvr, namespace, name})
	for _, sub := range []string{"", "status"} {
		delete(t.updated, updateKey{writtenKey{gvr, namespace, name}, sub})
	}
}

// rememberUpdate keeps what an update (a PUT of subresource, "" for the object) sent and
// the resourceVersion of the object the server answered.
func (t *ClusterTarget) rememberUpdate(gvr schema.GroupVersionResource, subresource string, sent, answered *unstructured.Unstructured) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.updated == nil {
		t.updated = map[updateKey]updateMemory{}
	}
	k := updateKey{writtenKey{gvr, answered.GetNamespace(), answered.GetName()}, subresource}
	m := t.updated[k]
	if m.resourceVersion != answered.GetResourceVersion() {
		m = updateMemory{resourceVersion: answered.GetResourceVersion()}
	}
	for _, b := range m.sent {
		if Equivalent(b, sent) {
			return
		}
	}
	if len(m.sent) == maxUpdateBodies {
		m.sent = m.sent[1:]
	}
	m.sent = append(slices.Clip(m.sent), sent.DeepCopy())
	t.updated[k] = m
}

// repeatsUpdate reports whether an update of desire (to subresource) on live is the last
// update this target sent, to the object that update left: the same body on the same
// object, which the server stores as it is. A PUT's server-set defaults are owned by its
// field manager, so that the comparison of the body with the live object alone cannot prove
// an update of an object with defaults (a Deployment's) a no-op.
func (t *ClusterTarget) repeatsUpdate(gvr schema.GroupVersionResource, subresource string, desire, live *unstructured.Unstructured) bool {
	t.mu.Lock()
	m, ok := t.updated[updateKey{writtenKey{gvr, live.GetNamespace(), live.GetName()}, subresource}]
	t.mu.Unlock()
	if !ok || m.resourceVersion == "" || m.resourceVersion != live.GetResourceVersion() {
		return false
	}
	return slices.ContainsFunc(m.sent, func(b *unstructured.Unstructured) bool { return Equivalent(b, desire) })
}

// writtenKey names an object a target wrote.
type writtenKey struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}
