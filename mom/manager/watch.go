package manager

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/scheduler"
	"github.com/topolayer/topolayer/topology"
)

// Declarations are what one operator reads and may write.
type Declarations struct {
	Inputs  *contract.InputResources
	Outputs *contract.OutputResources
}

// Declare asks every operator for its declarations (its input-resources and
// output-resources commands, offline) and adds its configured supplements.
func Declare(ctx context.Context, ops []Operator) (map[string]Declarations, error) {
	out := map[string]Declarations{}
	for _, op := range ops {
		in, o, err := op.Runner.Resources(ctx)
		if err != nil {
			return nil, fmt.Errorf("operator %s: read its declarations: %w", op.Name, err)
		}
		out[op.Name] = Declarations{
			Inputs:  contract.MergeInputResources(in, op.Supplements.Inputs),
			Outputs: contract.MergeOutputResources(o, op.Supplements.Outputs),
		}
	}
	return out, nil
}

// Watch is one informer: a resource on one cluster, in some namespaces.
type Watch struct {
	// Cluster is where the resource is read.
	Cluster string
	// Resource is the resource as that cluster serves it (a shadow resource on the
	// management cluster for a cluster-scoped standalone input).
	Resource schema.GroupVersionResource
	// Namespaces are the namespaces read, sorted; nil means all (and cluster-scoped
	// resources, which have no namespace, are read whole).
	Namespaces []string
}

// Watches places every declared input where the topology keeps it (Topology.Locate) and
// returns the informers that cover them all: one per cluster and resource.
func Watches(topo *topology.Topology, decl map[string]Declarations) ([]Watch, error) {
	type wkey struct {
		cluster string
		gvr     schema.GroupVersionResource
	}
	nss := map[wkey]map[string]bool{}
	add := func(op string, outputs *contract.OutputResources, t contract.ResourceTypeIdentifier, ns, name string, anyNamespace bool) error {
		id := contract.Identity{Group: t.Group, Version: t.Version, Resource: t.Resource, Namespace: ns, Name: name}
		loc, err := topo.Locate(outputs, id)
		if err != nil {
			return fmt.Errorf("operator %s: input %s: %w", op, id, err)
		}
		for l := &loc; l != nil; l = l.Status {
			if l.Absorbed {
				continue
			}
			k := wkey{l.Cluster, l.Identity.GroupVersionResource()}
			if nss[k] == nil {
				nss[k] = map[string]bool{}
			}
			if anyNamespace && l.Cluster == loc.Cluster {
				nss[k]["*"] = true
			} else {
				nss[k][l.Identity.Namespace] = true
			}
		}
		return nil
	}
	for _, op := range sortedKeys(decl) {
		d := decl[op]
		if d.Inputs == nil {
			continue
		}
		l := d.Inputs.ApplyConfigurationResources
		for _, e := range l.ExactResources {
			name := e.Name
			if contract.IsNamePattern(name) {
				// A pattern is watched where the objects it matches are placed: a name it
				// matches stands for them all.
				name = contract.NameMatchedBy(name)
			}
			if err := add(op, d.Outputs, e.ResourceTypeIdentifier, e.Namespace, name, false); err != nil {
				return nil, err
			}
		}
		for _, s := range l.LabelSelectedResources {
			// Placement is per object; a selection is placed as a whole by a name of its own.
			if err := add(op, d.Outputs, s.ResourceTypeIdentifier, s.Namespace, "selected", s.Namespace == ""); err != nil {
				return nil, err
			}
		}
		for _, r := range l.ResourceReferences {
			if err := add(op, d.Outputs, r.ReferringResource.ResourceTypeIdentifier, r.ReferringResource.Namespace, r.ReferringResource.Name, false); err != nil {
				return nil, err
			}
			var err error
			switch {
			case r.ImplicitNamespacedReference != nil:
				t := r.ImplicitNamespacedReference
				err = add(op, d.Outputs, t.ResourceTypeIdentifier, t.Namespace, "referenced", false)
			case r.ExplicitNamespacedReference != nil:
				err = add(op, d.Outputs, r.ExplicitNamespacedReference.ResourceTypeIdentifier, "", "referenced", true)
			case r.ClusterScopedReference != nil:
				err = add(op, d.Outputs, r.ClusterScopedReference.ResourceTypeIdentifier, "", "referenced", false)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if hcp, ok := topo.HostedControlPlane(); ok && (len(topo.Projections()) > 0 || topo.ReadsHostedControlPlane()) {
		// The projections and the hypershift profile read the HostedControlPlane.
		k := wkey{topo.Home(), hcp.GroupVersionResource()}
		nss[k] = map[string]bool{hcp.Namespace: true}
	}
	out := make([]Watch, 0, len(nss))
	for k, set := range nss {
		w := Watch{Cluster: k.cluster, Resource: k.gvr}
		if !set["*"] {
			for ns := range set {
				w.Namespaces = append(w.Namespaces, ns)
			}
			sort.Strings(w.Namespaces)
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cluster != out[j].Cluster {
			return out[i].Cluster < out[j].Cluster
		}
		return out[i].Resource.String() < out[j].Resource.String()
	})
	return out, nil
}

// CacheNamespaces returns the namespaces a cache of cluster must hold for watches: nil
// when some watch reads every namespace. Cluster-scoped resources are read whatever the
// namespaces (controller-runtime's cache ignores them for cluster-scoped kinds).
func CacheNamespaces(watches []Watch, cluster string) []string {
	set := map[string]bool{}
	for _, w := range watches {
		if w.Cluster != cluster {
			continue
		}
		if w.Namespaces == nil {
			return nil
		}
		for _, ns := range w.Namespaces {
			if ns != "" {
				set[ns] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// watchKey names one watched resource on one cluster.
type watchKey struct {
	cluster string
	gvr     schema.GroupVersionResource
}

// readersOf returns the operators that read each watched resource: those whose own inputs
// need its informer.
func readersOf(topo *topology.Topology, decl map[string]Declarations) (map[watchKey][]string, error) {
	out := map[watchKey][]string{}
	for _, op := range sortedKeys(decl) {
		ws, err := Watches(topo, map[string]Declarations{op: decl[op]})
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			k := watchKey{w.Cluster, w.Resource}
			out[k] = append(out[k], op)
		}
	}
	return out, nil
}

// Watch retry timing: a resource a cluster does not serve yet (its CRD is not created) is
// looked up again after watchRetryBase, doubling up to watchRetryMax.
const (
	watchRetryBase = 500 * time.Millisecond
	watchRetryMax  = 8 * time.Second
)

// watchCluster registers an event handler on the informer of every resource watched on
// the cluster c, named name, whose watched objects inf records; the informers must sync
// before syncCtx ends. A resource c does not serve yet is looked up again with backoff
// until life ends, and watched once served (retryWatch).
func (m *Manager) watchCluster(syncCtx, life context.Context, c cluster.Cluster, inf *informed, name string) error {
	for _, w := range m.watches {
		if w.Cluster != name {
			continue
		}
		served, err := m.startWatch(syncCtx, c, inf, w)
		if err != nil {
			return err
		}
		if !served {
			m.log.Info("not watched yet: the cluster does not serve the resource; looking again with backoff", "cluster", w.Cluster, "resource", w.Resource.String())
			go m.retryWatch(life, c, inf, w)
		}
	}
	return nil
}

// startWatch opens the informer of w's resource on c and registers the handler; served is
// false when c does not serve the resource.
func (m *Manager) startWatch(ctx context.Context, c cluster.Cluster, inf *informed, w Watch) (served bool, err error) {
	gvk, err := c.GetRESTMapper().KindFor(w.Resource)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resource %s: %w", w.Resource, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	informer, err := c.GetCache().GetInformer(ctx, u)
	if err != nil {
		return false, fmt.Errorf("informer for %s: %w", w.Resource, err)
	}
	if _, err := informer.AddEventHandler(m.handler(w)); err != nil {
		return false, fmt.Errorf("handler for %s: %w", w.Resource, err)
	}
	inf.add(w, gvk)
	m.log.V(1).Info("watching", "cluster", w.Cluster, "resource", w.Resource.String(), "namespaces", w.Namespaces)
	return true, nil
}

// retryWatch looks w's resource up on c with backoff until c serves it or ctx ends, then
// watches it and runs the operators that read it: what they read may exist already.
func (m *Manager) retryWatch(ctx context.Context, c cluster.Cluster, inf *informed, w Watch) {
	start := time.Now()
	delay := watchRetryBase
	for attempt := 1; ; attempt++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, watchRetryMax)
		sctx, cancel := context.WithTimeout(ctx, connectTimeout)
		served, err := m.startWatch(sctx, c, inf, w)
		cancel()
		if err != nil {
			m.log.Error(err, "watch a resource served late: retrying", "cluster", w.Cluster, "resource", w.Resource.String(), "attempt", attempt)
			continue
		}
		if !served {
			m.log.V(1).Info("still not served", "cluster", w.Cluster, "resource", w.Resource.String(), "attempt", attempt)
			continue
		}
		m.metrics.lateWatches.WithLabelValues(w.Cluster).Inc()
		ops := m.readersOf[watchKey{w.Cluster, w.Resource}]
		m.log.Info("watching a resource served late", "cluster", w.Cluster, "resource", w.Resource.String(), "after", time.Since(start).Round(time.Millisecond), "operators", ops)
		for _, op := range ops {
			m.scheduler.Notify(op, scheduler.Cause{Cluster: w.Cluster, Group: w.Resource.Group, Resource: w.Resource.Resource})
		}
		return
	}
}

// handler turns the changes of one watched resource into notifications of the operators
// that read the changed object.
func (m *Manager) handler(w Watch) toolscache.ResourceEventHandler {
	object := func(obj any) (*unstructured.Unstructured, bool) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			if d, isTomb := obj.(toolscache.DeletedFinalStateUnknown); isTomb {
				u, ok = d.Obj.(*unstructured.Unstructured)
			}
			if !ok {
				return nil, false
			}
		}
		if w.Namespaces != nil && u.GetNamespace() != "" && !slices.Contains(w.Namespaces, u.GetNamespace()) {
			return nil, false
		}
		return u, true
	}
	notify := func(obj any, deleted bool) {
		if u, ok := object(obj); ok {
			m.changed(w, u, deleted)
		}
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if isInInitialList {
				// What was there when the manager started: every operator's first run reads
				// it. The HostedControlPlane may have changed since New read it for the
				// profile: the first runs plan with what the informer holds.
				if u, ok := object(obj); ok && m.isTheHostedControlPlane(w, u) {
					m.hostedControlPlaneChanged(u)
				}
				return
			}
			notify(obj, false)
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*unstructured.Unstructured)
			n, ok2 := newObj.(*unstructured.Unstructured)
			if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
				return // a resync
			}
			notify(newObj, false)
		},
		DeleteFunc: func(obj any) { notify(obj, true) },
	}
}

// isTheHostedControlPlane reports whether u, an object of watch w, is the topology's
// HostedControlPlane.
func (m *Manager) isTheHostedControlPlane(w Watch, u *unstructured.Unstructured) bool {
	hcp, ok := m.topo.HostedControlPlane()
	return ok && w.Cluster == m.topo.Home() && w.Resource == hcp.GroupVersionResource() &&
		u.GetNamespace() == hcp.Namespace && u.GetName() == hcp.Name
}

// changed notifies the operators that read u, a changed (or deleted) object of watch w.
// A change of what the hypershift profile reads of the topology's HostedControlPlane
// notifies every operator (hostedControlPlaneChanged).
func (m *Manager) changed(w Watch, u *unstructured.Unstructured, deleted bool) {
	hostedID := contract.Identity{Group: w.Resource.Group, Version: w.Resource.Version, Resource: w.Resource.Resource, Namespace: u.GetNamespace(), Name: u.GetName()}
	key, rv := writtenKey(w.Cluster, hostedID), u.GetResourceVersion()
	if m.isTheHostedControlPlane(w, u) {
		now := u
		if deleted {
			now = nil
		}
		if m.hostedControlPlaneChanged(now) {
			m.notify(m.order, key, rv, m.hostedControlPlaneCause())
			return
		}
	}
	id, err := m.topo.Names().ToSource(w.Cluster, hostedID, u.GetAnnotations())
	if err != nil {
		m.log.V(2).Info("ignored: no standalone identity", "cluster", w.Cluster, "object", hostedID.String(), "reason", err.Error())
		return
	}
	ops := m.ix.Interested(id, u.GetLabels())
	if hcp, ok := m.topo.HostedControlPlane(); ok && w.Resource == hcp.GroupVersionResource() {
		ops = m.projectionReaders()
	}
	m.notify(ops, key, rv, scheduler.Cause{Cluster: w.Cluster, Group: id.Group, Resource: id.Resource, Namespace: id.Namespace, Name: id.Name})
}

// notify notifies ops of cause, a change that left the object key at resourceVersion rv:
// an operator applying a plan gets it once its writes are known (heldChange).
func (m *Manager) notify(ops []string, key, rv string, cause scheduler.Cause) {
	for _, op := range ops {
		st := m.ops[op]
		st.mu.Lock()
		if st.applying {
			st.held = append(st.held, heldChange{key: key, resourceVersion: rv, cause: cause})
			st.mu.Unlock()
			continue
		}
		c := cause
		c.SelfInflicted = st.written.has(key, rv)
		st.mu.Unlock()
		m.scheduler.Notify(op, c)
	}
}

// projectionReaders are the operators that read a config singleton a projection fills.
func (m *Manager) projectionReaders() []string {
	var out []string
	for _, name := range m.order {
		for _, p := range m.topo.Projections() {
			if len(m.ix.Interested(p.Target, nil)) > 0 && slices.Contains(m.ix.Interested(p.Target, nil), name) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

func writtenKey(cluster string, id contract.Identity) string {
	return strings.Join([]string{cluster, id.Group, id.Resource, id.Namespace, id.Name}, "/")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
