package topology

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/hosted/serviceca"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/gather"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Topology is the placement of one configuration: which clusters there are, how standalone
// names map onto them, where an operator's inputs live, how its outputs are translated and
// which live targets write them. It is built once (New) and passed as a value; nothing
// outside this package and config asks the configuration which topology it is.
type Topology struct {
	cfg *config.TopologyConfig
	// name is the plan's topology: plans.TopologyStandalone or TopologyHosted.
	name string
	// clusters are the clusters written to and read from; home is the one topolayer runs
	// on (status objects, events, its lease).
	clusters []string
	home     string
	// bound is the namespace a cluster's objects are confined to ("" none): the hosted
	// control plane's namespace on the management cluster.
	bound map[string]string
	names namespaces.Mapper
	// router is the configured routing table with the topology's built-in rules, built once.
	router *routing.Table
	// annotate records the standalone identity on every object written (names are renamed,
	// so the inverse needs it).
	annotate bool
	// ownership makes existing objects without topolayer's marks someone else's.
	ownership bool
	// hcp is the HostedControlPlane that owns everything written in its namespace; nil
	// without one. hcpSpec is what the hypershift profile reads of it, when known
	// (WithHostedControlPlane).
	hcp     *contract.Identity
	hcpSpec *hosted.HostedControlPlane
	// aliased are the standalone identities (Identity.Key without version) the configuration
	// says an existing object of the home cluster stands for (namespaces.aliases).
	aliased map[contract.Key]bool
	// readOnly are the existing objects of the HCP namespace the aliases name: the operator
	// reads them, the containment refuses its writes of them.
	readOnly []contract.Identity
	// status is where run results go.
	status Status
}

// Status is where a manager keeps its status objects, events and lease.
type Status struct {
	// Cluster and Namespace locate them.
	Cluster, Namespace string
	// Create is true when the namespace is topolayer's own and is created if missing;
	// false when the environment provides it (the hosted control plane's namespace).
	Create bool
}

// New builds the topology of a defaulted, validated configuration (as config.Load returns
// it): for Standalone, one cluster and identity names; for Hosted, the management cluster
// confined to the hosted control plane's namespace, the guest cluster, and simulated
// namespaces with the configured aliases (validated here, once).
func New(cfg *config.TopologyConfig) (*Topology, error) {
	if cfg == nil {
		return nil, errors.New("topology: no configuration")
	}
	switch cfg.Topology.Type {
	case config.Standalone:
		return &Topology{
			cfg:      cfg,
			router:   cfg.RoutingTable(),
			name:     plans.TopologyStandalone,
			clusters: []string{routing.ClusterStandalone},
			home:     routing.ClusterStandalone,
			bound:    map[string]string{},
			names:    namespaces.Identity{},
			status:   Status{Cluster: routing.ClusterStandalone, Namespace: cfg.Manager.Namespace, Create: true},
		}, nil
	case config.Hosted:
		h := cfg.Topology.Hosted
		if h == nil || h.Namespace == "" {
			return nil, errors.New("topology.hosted.namespace: required for a Hosted topology")
		}
		names := namespaces.Hosted{Namespace: h.Namespace}
		aliased := map[contract.Key]bool{}
		var readOnly []contract.Identity
		for _, a := range cfg.Namespaces.Aliases {
			src := contract.Identity{Group: a.Group, Resource: a.Resource, Namespace: a.Namespace, Name: a.Name}
			names.Aliases = append(names.Aliases, namespaces.Alias{Source: src, Name: a.HostedName})
			aliased[src.Key()] = true
			readOnly = append(readOnly, contract.Identity{Group: a.Group, Resource: a.Resource, Namespace: h.Namespace, Name: a.HostedName})
		}
		if err := names.Validate(); err != nil {
			return nil, fmt.Errorf("namespaces.aliases: %w", err)
		}
		t := &Topology{
			cfg:       cfg,
			router:    cfg.RoutingTable(),
			name:      plans.TopologyHosted,
			clusters:  []string{routing.ClusterManagement, routing.ClusterGuest},
			home:      routing.ClusterManagement,
			bound:     map[string]string{routing.ClusterManagement: h.Namespace},
			names:     names,
			aliased:   aliased,
			readOnly:  readOnly,
			annotate:  true,
			ownership: true,
			status:    Status{Cluster: routing.ClusterManagement, Namespace: h.Namespace},
		}
		if h.HostedControlPlane != "" {
			t.hcp = &contract.Identity{
				Group: hosted.HostedControlPlaneGVR().Group, Version: hosted.HostedControlPlaneGVR().Version, Resource: hosted.HostedControlPlaneGVR().Resource,
				Namespace: h.Namespace, Name: h.HostedControlPlane,
			}
		}
		return t, nil
	default:
		return nil, fmt.Errorf("topology.type: %q is not %s or %s", cfg.Topology.Type, config.Standalone, config.Hosted)
	}
}

// Config returns the configuration the topology was built from.
func (t *Topology) Config() *config.TopologyConfig { return t.cfg }

// Name is the topology's name in plans: plans.TopologyStandalone or TopologyHosted.
func (t *Topology) Name() string { return t.name }

// Clusters returns the names of the clusters written to and read from, home first.
func (t *Topology) Clusters() []string { return slices.Clone(t.clusters) }

// Home is the cluster topolayer runs on: where its status objects, events and lease are.
func (t *Topology) Home() string { return t.home }

// Bound returns the namespace every object topolayer writes or reads on cluster is confined
// to, or "" when the cluster is not confined.
func (t *Topology) Bound(cluster string) string { return t.bound[cluster] }

// Names maps standalone identities onto the clusters and back.
func (t *Topology) Names() namespaces.Mapper { return t.names }

// Status is where a manager keeps its status objects and events.
func (t *Topology) Status() Status { return t.status }

// HostedControlPlane returns the HostedControlPlane that owns what is written in its
// namespace, when the topology has one.
func (t *Topology) HostedControlPlane() (contract.Identity, bool) {
	if t.hcp == nil {
		return contract.Identity{}, false
	}
	return *t.hcp, true
}

// Owner returns the ownerReference the management target gives what it writes in the HCP
// namespace, of the HostedControlPlane the topology was given (WithHostedControlPlane); nil
// without one (ResolveOwner reads it from the management cluster).
func (t *Topology) Owner() *metav1.OwnerReference {
	if t.hcpSpec == nil {
		return nil
	}
	return t.hcpSpec.Owner
}

// LeaderElection returns the namespace and name of the Lease that elects one replica of
// topolayer run among those of this topology.
func (t *Topology) LeaderElection() (namespace, name string) {
	if t.hcp != nil {
		return t.status.Namespace, "topolayer-" + t.hcp.Name
	}
	return t.status.Namespace, "topolayer"
}

// Engine returns the translation engine of one operator: the configured routing table
// (with the topology's built-in rules), the topology's names, the configured transform
// profiles and patches, the operator's policy and the supplement the configuration adds to
// its output-resources. declared is the operator's output-resources; nil trusts the class
// folders.
func (t *Topology) Engine(operator string, declared *contract.OutputResources) (translate.Engine, error) {
	if t.annotate && operator == "" {
		return translate.Engine{}, errors.New("a hosted plan needs the operator's name: it labels every object written")
	}
	transforms, err := transformsOf(t.cfg, t.hcpSpec)
	if err != nil {
		return translate.Engine{}, err
	}
	e := translate.Engine{
		Topology: t.name,
		Operator: operator,
		Router:   t.router,
		Names:    t.names,
		Declared: declared,
		Stages:   translate.StandaloneStages(transforms...),
		Policy:   t.cfg.PolicyFor(operator),
	}
	if t.annotate {
		e.Stages = translate.HostedStages(transforms...)
	}
	if t.hcp != nil {
		e.HCPNamespace, e.HostedControlPlane = t.hcp.Namespace, t.hcp.Name
		e.Containment = hosted.Containment(t.hcp.Namespace)
		e.Containment.ReadOnly = slices.Clone(t.readOnly)
	}
	if h := t.cfg.Topology.Hosted; t.name == plans.TopologyHosted && h != nil {
		e.GuestIdentity = &translate.GuestIdentity{ManagementAPI: slices.Clone(h.GuestIdentity.ManagementAPI)}
	}
	if op, ok := t.cfg.Operator(operator); ok {
		e.Supplement = op.Supplements.Outputs
	}
	return e, nil
}

var _ gather.Placement = (*Topology)(nil)

// Locate decides where an input with standalone identity id lives. Inputs have no class,
// so: on a topology with one cluster, there, unchanged. Otherwise on the home cluster, at
// its name there, when both (1) the routing table places id, as class Management, on the
// home cluster, and (2) the operator itself writes id there (outputs declares it as a
// Management or Configuration output); else on the guest, unchanged. A Namespace placed on
// the home cluster is absorbed (Location.Absorbed). A cluster configuration object
// (config.openshift.io) the operator writes is read where its users edit it, on the guest,
// with the status the operator wrote on the home cluster (Location.Status). outputs may be
// nil: then every input is read from the guest.
//
// An aliased input (namespaces.aliases: the hosted control plane's own object stands for
// the standalone one, e.g. HyperShift's `oauth` Route for CAO's `oauth-openshift`) is read
// from that object on the home cluster, whatever the routing does with the operator's
// writes of it (they may well be dropped: the environment owns the object).
func (t *Topology) Locate(outputs *contract.OutputResources, id contract.Identity) (gather.Location, error) {
	if len(t.clusters) == 1 {
		return gather.Location{Cluster: t.home, Identity: id}, nil
	}
	if t.aliased[id.Key()] {
		target, err := t.names.ToTarget(t.home, id)
		if err != nil {
			return gather.Location{}, err
		}
		return gather.Location{Cluster: t.home, Identity: target}, nil
	}
	guest := gather.Location{Cluster: routing.ClusterGuest, Identity: id}
	if outputs == nil {
		return guest, nil
	}
	if !outputs.ManagementResources.Matches(id) && !outputs.ConfigurationResources.Matches(id) {
		return guest, nil
	}
	d := t.router.Route(routing.Object{Class: contract.ClassManagement, Identity: id})
	if d.Cluster != t.home { // Route clears the cluster of dropped and rejected
		return guest, nil
	}
	target, err := t.names.ToTarget(t.home, id)
	if err != nil {
		return gather.Location{}, err
	}
	written := gather.Location{Cluster: t.home, Identity: target, Absorbed: d.Disposition == routing.Absorbed}
	if userEdited(id) {
		// Its users edit its spec on the guest; the operator writes its status here.
		guest.Status = &written
		return guest, nil
	}
	return written, nil
}

// userEdited reports whether id is a cluster configuration object whose spec the guest's
// users edit (config.openshift.io, but not the ClusterOperators operators write whole).
func userEdited(id contract.Identity) bool {
	return id.Group == "config.openshift.io" && id.Resource != "clusteroperators"
}

// Projections are the configured projections of the HostedControlPlane into config
// singletons (config.Gather.Projections); none without a HostedControlPlane.
func (t *Topology) Projections() []gather.Projection {
	if t.hcp == nil {
		return nil
	}
	out := make([]gather.Projection, 0, len(t.cfg.Gather.Projections))
	for _, p := range t.cfg.Gather.Projections {
		out = append(out, gather.Projection{
			Target: contract.Identity{Group: p.Group, Version: p.Version, Resource: p.Resource, Name: p.Name},
			Kind:   p.Kind,
			Field:  config.FieldPath(p.Field),
			From:   config.FieldPath(p.From),
		})
	}
	return out
}

// TargetOptions are what the live targets of one operator need besides the topology.
type TargetOptions struct {
	// Operator labels every object written and names the field manager's owner.
	Operator string
	// Impersonate is a service-account user name every request is made as; "" writes as
	// the client configurations' own identity.
	Impersonate string
	// Owner is the HostedControlPlane's ownerReference when the caller resolved it already
	// (ResolveOwner); nil resolves it (one request, as the impersonated user).
	Owner *metav1.OwnerReference
	// Adopt, when not nil, makes the targets adopt existing objects without topolayer's marks
	// (apply.Options.Adopt) instead of refusing them; nil refuses them on a topology that
	// requires ownership.
	Adopt *apply.Adoption
	// Caches are what the targets read without asking the server (apply.Options.Cache), by
	// cluster name; a cluster without one asks the server for every write.
	Caches map[string]apply.Cache
}

// AdoptionOf returns the adoption of an operator's writes: its configuration's adopt policy
// (operators[].adopt), extended by the previous field managers named on the command line
// (--adopt-from); nil when neither enables adoption.
func AdoptionOf(op *config.Adoption, fieldManagers []string) *apply.Adoption {
	if op == nil && len(fieldManagers) == 0 {
		return nil
	}
	a := &apply.Adoption{}
	if op != nil {
		a.FieldManagers = append(a.FieldManagers, op.FieldManagers...)
	}
	for _, m := range fieldManagers {
		if !slices.Contains(a.FieldManagers, m) {
			a.FieldManagers = append(a.FieldManagers, m)
		}
	}
	return a
}

// ResolveOwner reads the topology's HostedControlPlane on the home cluster (home is its
// client configuration) as user ("" for home's own identity) and returns the ownerReference
// every object written in its namespace gets; nil, nil when the topology has none.
func (t *Topology) ResolveOwner(ctx context.Context, home *rest.Config, user string) (*metav1.OwnerReference, error) {
	hcp, err := t.ReadHostedControlPlane(ctx, home, user)
	if hcp == nil || err != nil {
		return nil, err
	}
	return hosted.OwnerReference(hcp), nil
}

// ReadHostedControlPlane reads the topology's HostedControlPlane on the home cluster (home is
// its client configuration) as user ("" for home's own identity): the object its
// ownerReference (hosted.OwnerReference) and, when the profile reads it
// (ReadsHostedControlPlane), the profile's inputs (hosted.ParseHostedControlPlane) come from.
// nil, nil when the topology has none.
func (t *Topology) ReadHostedControlPlane(ctx context.Context, home *rest.Config, user string) (*unstructured.Unstructured, error) {
	if t.hcp == nil {
		return nil, nil
	}
	if home == nil {
		return nil, fmt.Errorf("cluster %s: no client configuration", t.home)
	}
	cfg := rest.CopyConfig(home)
	if user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	}
	return hosted.GetHostedControlPlane(ctx, cfg, t.hcp.Namespace, t.hcp.Name)
}

// ReadsHostedControlPlane reports whether the configured profiles read the topology's
// HostedControlPlane (the hypershift profile, hosted.Profile): then whoever translates for the
// topology gives it the object (WithHostedControlPlane), and a change of what the profile
// reads of it changes the plans.
func (t *Topology) ReadsHostedControlPlane() bool {
	return t.hcp != nil && slices.Contains(t.cfg.Transforms.Profiles, hosted.ProfileHyperShift)
}

// Targets builds one live target per cluster of the topology over the client configurations
// by cluster name: a confined cluster's target refuses writes outside its namespace and
// gives every object the HostedControlPlane ownerReference, and judges every patch by what the
// server says it makes of the live object (apply.Options.Admission: the operator's engine's
// AdmitPatched); on a topology that renames, an existing object without topolayer's marks is
// someone else's (a conflict).
func (t *Topology) Targets(ctx context.Context, clusters map[string]*rest.Config, o TargetOptions) (map[string]apply.Target, error) {
	owner := o.Owner
	if owner == nil && t.hcp != nil {
		var err error
		if owner, err = t.ResolveOwner(ctx, clusters[t.home], o.Impersonate); err != nil {
			return nil, err
		}
	}
	// A patch of an object on the confined cluster is judged by what the server says it
	// makes of the live object, with the checks the operator's engine runs on whole objects.
	var admission apply.Admission
	if len(t.bound) > 0 {
		e, err := t.Engine(o.Operator, nil)
		if err != nil {
			return nil, err
		}
		admission = apply.AdmissionFunc(e.AdmitPatched)
	}
	out := make(map[string]apply.Target, len(t.clusters))
	for _, name := range t.clusters {
		rc := clusters[name]
		if rc == nil {
			return nil, fmt.Errorf("cluster %s: no client configuration", name)
		}
		opts := apply.Options{Impersonate: o.Impersonate, Operator: o.Operator, RequireOwnership: t.ownership, Namespace: t.bound[name], Adopt: o.Adopt, Cache: o.Caches[name]}
		if opts.Namespace != "" {
			opts.HostedControlPlane, opts.Admission = owner, admission
		}
		target, err := apply.NewClusterTarget(name, rc, opts)
		if err != nil {
			return nil, err
		}
		out[name] = target
	}
	return out, nil
}

// GuestIdentities returns the writer of the guest kubeconfig Secrets of one operator's
// operands (package guestidentity) over the client configurations by cluster name, with the
// configured guest API address, CA and token lifetime; nil, nil on a topology without a
// guest. owner is the HostedControlPlane's ownerReference (ResolveOwner); clk tells the time
// of issue (nil: the real clock). The Secrets are topolayer's own: they are written as the
// configurations' identity, not the operator's.
func (t *Topology) GuestIdentities(clusters map[string]*rest.Config, operator string, owner *metav1.OwnerReference, clk clock.PassiveClock) (*guestidentity.Writer, error) {
	h := t.cfg.Topology.Hosted
	if t.name != plans.TopologyHosted || h == nil {
		return nil, nil
	}
	g := h.GuestIdentity
	expiration := config.DefaultTokenExpiration
	if g.TokenExpiration != nil {
		expiration = g.TokenExpiration.Duration
	}
	return guestidentity.New(clusters[routing.ClusterManagement], clusters[routing.ClusterGuest], guestidentity.Options{
		Namespace: h.Namespace, Operator: operator, Owner: owner,
		Server: cmp.Or(g.Server, config.DefaultGuestServer), CAConfigMap: cmp.Or(g.CAConfigMap, config.DefaultGuestCAConfigMap),
		CAKey: cmp.Or(g.CAKey, config.DefaultGuestCAKey), Expiration: expiration, Clock: clk,
	})
}

// ServiceCA returns what fills the operands' service CA bundles in the HCP namespace from
// the configured CA bundle (package serviceca) over the management cluster's client
// configuration in clusters; nil, nil when the topology configures none.
func (t *Topology) ServiceCA(clusters map[string]*rest.Config) (*serviceca.Injector, error) {
	h := t.serviceCAHosted()
	if h == nil {
		return nil, nil
	}
	cs, err := kubernetes.NewForConfig(clusters[routing.ClusterManagement])
	if err != nil {
		return nil, fmt.Errorf("service CA bundles: %w", err)
	}
	return serviceca.New(cs, serviceca.Options{
		Namespace: h.Namespace, ConfigMap: h.ServiceCA.ConfigMap, Key: cmp.Or(h.ServiceCA.Key, config.DefaultGuestCAKey),
		PlacedBy: apply.DefaultFieldManager,
	}), nil
}

// serviceCAHosted is the hosted topology when it configures a service CA bundle, else nil.
func (t *Topology) serviceCAHosted() *config.HostedTopology {
	if h := t.cfg.Topology.Hosted; t.name == plans.TopologyHosted && h != nil && h.ServiceCA != nil {
		return h
	}
	return nil
}

// ServiceCACandidates returns the names of the ConfigMaps in the HCP namespace that the
// service CA bundle may go to after plan was applied: those plan writes, and those among
// inputs (an operator's gathered inputs, standalone) that ask for the bundle, where they are
// placed.
func (t *Topology) ServiceCACandidates(plan *plans.Plan, outputs *contract.OutputResources, inputs []*contract.InputObject) []string {
	h := t.serviceCAHosted()
	if h == nil {
		return nil
	}
	names := serviceca.Planned(plan, routing.ClusterManagement, h.Namespace)
	for _, in := range inputs {
		if in.Group != "" || in.Resource != "configmaps" || !serviceca.AsksForBundleAnnotations(in.Object.GetAnnotations()) {
			continue
		}
		loc, err := t.Locate(outputs, in.Identity())
		if err != nil || loc.Cluster != routing.ClusterManagement || loc.Identity.Namespace != h.Namespace {
			continue
		}
		names = append(names, loc.Identity.Name)
	}
	return names
}

// Engine builds the topology of cfg and the translation engine of one operator in it: New
// and Topology.Engine, for callers that need nothing else of the topology.
func Engine(cfg *config.TopologyConfig, operator string, declared *contract.OutputResources) (translate.Engine, error) {
	t, err := New(cfg)
	if err != nil {
		return translate.Engine{}, err
	}
	return t.Engine(operator, declared)
}

// WithHostedControlPlane returns a copy of the topology whose hypershift profile reads h, the
// HostedControlPlane its operands run in (hosted.ParseHostedControlPlane of the live object, or
// of a file): the opinions of HyperShift's component framework that depend on it join the
// profile's transforms. It is an error on a topology without a HostedControlPlane, or with
// another one.
func (t *Topology) WithHostedControlPlane(h *hosted.HostedControlPlane) (*Topology, error) {
	if t.hcp == nil {
		return nil, errors.New("the topology has no HostedControlPlane")
	}
	if h.Namespace != t.hcp.Namespace || h.Name != t.hcp.Name {
		return nil, fmt.Errorf("HostedControlPlane %s/%s is not the topology's %s/%s", h.Namespace, h.Name, t.hcp.Namespace, t.hcp.Name)
	}
	c := *t
	c.hcpSpec = h
	return &c, nil
}

// Transforms returns the transforms of the configured profiles (hosted.Profile, without a
// HostedControlPlane) but those transforms.disable names, then the configured patches,
// compiled.
func Transforms(cfg *config.TopologyConfig) ([]transform.Transform, error) {
	return transformsOf(cfg, nil)
}

// transformsOf is Transforms with the HostedControlPlane the profile reads (nil: unknown).
func transformsOf(cfg *config.TopologyConfig, hcp *hosted.HostedControlPlane) ([]transform.Transform, error) {
	var out []transform.Transform
	o := hosted.ProfileOptions{HostedControlPlane: hcp}
	if h := cfg.Topology.Hosted; h != nil {
		o.ManagementAssignsNoUIDs = h.ManagementAssignsNoUIDs
		o.Components = h.HyperShift
		o.GuestAPIServer = h.GuestIdentity.Server
	}
	for _, p := range cfg.Transforms.Profiles {
		profile, ok := hosted.Profile(p, o)
		if !ok {
			return nil, fmt.Errorf("transforms.profiles: unknown profile %q", p)
		}
		out = append(out, slices.DeleteFunc(profile, func(t transform.Transform) bool { return slices.Contains(cfg.Transforms.Disable, t.Name) })...)
	}
	if h := cfg.Topology.Hosted; h != nil {
		for i, k := range h.GuestIdentity.KubeconfigFields {
			t, err := kubeconfigField(k).Transform()
			if err != nil {
				return nil, fmt.Errorf("topology.hosted.guestIdentity.kubeconfigFields[%d]: %w", i, err)
			}
			out = append(out, t)
		}
	}
	for i, p := range cfg.Transforms.Patches {
		t, err := p.Transform()
		if err != nil {
			return nil, fmt.Errorf("transforms.patches[%d]: %w", i, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// kubeconfigField is the patch that makes an operand's config file name the guest
// kubeconfig the guest identity rule mounts into its pods: a merge patch of the document in
// the ConfigMap's data key, on the management cluster where the operand runs.
func kubeconfigField(k config.KubeconfigField) transform.Patch {
	var value any = guestidentity.KubeconfigMountPath + "/" + guestidentity.KubeconfigKey
	segments := strings.Split(k.Field, ".")
	for i := len(segments) - 1; i >= 0; i-- {
		value = map[string]any{segments[i]: value}
	}
	merge, _ := json.Marshal(value) // strings and maps only
	return transform.Patch{
		Name:     guestidentity.Rule + "/kubeconfig-field",
		Cluster:  routing.ClusterManagement,
		Match:    routing.Match{Resource: "configmaps", Namespace: k.Namespace, Name: k.Name},
		Merge:    string(merge),
		Document: &transform.Document{Key: k.Key},
	}
}
