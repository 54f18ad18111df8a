package hosted

import (
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/topolayer/topolayer/internal/translate/podsecurity"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// ProfileHyperShift names the hypershift transform profile.
const ProfileHyperShift = "hypershift"

// AnnotationWorkloadPartitioning asks a standalone OpenShift cluster that partitions its
// CPUs to run a pod on the CPUs it keeps for its own management workloads. It is the
// guest's partitioning, not the management cluster's: hypershift/drop-workload-partitioning
// removes it from the pods the profile places there.
const AnnotationWorkloadPartitioning = "target.workload.openshift.io/management"

// Profile returns the transforms of a built-in profile by name; false for an unknown one.
// The hypershift profile is HyperShiftProfile, then the opinions of HyperShift's component
// framework that read nothing of the HostedControlPlane (volume modes, image pull policy,
// termination message policy, the default UID when o says the management cluster assigns
// none, node affinity and colocation, and what o.Components configure: payload images,
// konnectivity sidecars, with the proxy and trust bundles of o.HostedControlPlane when it
// has them, the availability prober, the request-serving label), then, with
// o.HostedControlPlane, the opinions that read it (replicas and rollout by availability
// policy, debug components scaled to zero, priority class by criticality, the HCP's node
// selector, tolerations, labels and annotations, a read-only root filesystem, resource
// request overrides, a PodDisruptionBudget for each API-critical workload, the budgets by
// availability policy), then the multi-zone spread of the components o.Components names.
func Profile(name string, o ProfileOptions) ([]transform.Transform, bool) {
	if name != ProfileHyperShift {
		return nil, false
	}
	out := append(HyperShiftProfile(), frameworkOpinions(o)...)
	if o.HostedControlPlane != nil {
		out = append(out, hcpOpinions(o.HostedControlPlane, o.Components)...)
	}
	out = append(out, spreadOpinions(o)...)
	// Last: the scratch volumes every opinion before it added are bounded too.
	return append(out, boundScratch()...), true
}

// ProfileTransformNames returns, sorted, the name of every transform a built-in profile
// may have, whatever its options (a HostedControlPlane that sets every field the profile
// reads, the default UID on); false for an unknown profile. These are the names a
// configuration may turn off one by one (transforms.disable).
func ProfileTransformNames(name string) ([]string, bool) {
	every := &HostedControlPlane{
		AvailabilityPolicy:    HighlyAvailable,
		NodeSelector:          map[string]string{"k": "v"},
		Proxy:                 &Proxy{TrustedCA: "c"},
		AdditionalTrustBundle: "c",
		Tolerations:           []any{map[string]any{"operator": "Exists"}},
		Annotations: map[string]string{
			AnnotationDebugDeployments:                       "c",
			AnnotationResourceRequestOverridePrefix + "/c.c": "cpu=1",
		},
	}
	components := ComponentOptions{
		Images:             map[string]string{ImageControlPlaneOperator: "i", ImageAvailabilityProber: "i", ImageCLI: "i"},
		RequestServing:     []string{"c"},
		MultiZoneSpread:    []string{"c"},
		Konnectivity:       []KonnectivityProxy{{Workload: "c", Mode: KonnectivityDual}},
		AvailabilityProber: []string{"c"},
		AuditLogs:          []string{"c"},
	}
	transforms, ok := Profile(name, ProfileOptions{HostedControlPlane: every, ManagementAssignsNoUIDs: true, Components: components})
	if !ok {
		return nil, false
	}
	var out []string
	for _, t := range transforms {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string { return []string{ProfileHyperShift} }

// AnnotationSafeToEvict set to "false" on a pod stops the management cluster's autoscaler
// from removing the node the pod runs on. HyperShift wants its control-plane pods evictable
// (it lists their scratch volumes in safe-to-evict-local-volumes, and its e2e checks every
// pod): hypershift/drop-autoscaler-pinning removes any other value than "true" from the pods
// the profile places there.
const AnnotationSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict"

// HyperShiftProfile is the generic set of changes a standalone workload needs to run as part
// of a hosted control plane, for every workload kind placed on the management cluster: its
// standalone scheduling (nodeSelector, tolerations, affinity, priority class, the pods'
// workload partitioning annotation) and the host paths of its volumes go; the control-plane labels,
// tolerations, priority class and pull secret come. The pods' safe-to-evict "false", which
// would pin a node of the shared management cluster, goes (hypershift/drop-autoscaler-pinning).
// Containment: every pod template and bare Pod is brought to Pod Security "restricted" by
// named transforms: host-path-to-empty-dir (the host's directory becomes the pod's own
// scratch directory, under the same volume name) and the podsecurity.Edits strip
// (Transform.Strips) what only a standalone node allows; restricted-security-context adds
// what restricted needs. drop-owner-references removes the operator's ownerReferences from
// every management object. The ownerReference to the HostedControlPlane is not a transform:
// the management target adds it (apply.Options.HostedControlPlane).
// withhold-management-ca-requests keeps from every management object the keys that would ask
// the management cluster's own OpenShift controllers for its CAs
// (LabelInjectTrustedCABundle, ServiceCARequestAnnotations).
func HyperShiftProfile() []transform.Transform {
	var out []transform.Transform
	for _, resource := range podspec.PodBearingResources() {
		group := podspec.WorkloadGroup(resource)
		path, _ := podspec.PodTemplatePath(resource)
		match := routing.Match{Group: &group, Resource: resource}
		addT := func(name string, strips bool, f func(transform.Context) (kio.Filter, error)) {
			out = append(out, transform.Transform{Name: ProfileHyperShift + "/" + name, Cluster: routing.ClusterManagement, Match: match, Filter: f, Strips: strips})
		}
		add := func(name string, f func(transform.Context) (kio.Filter, error)) { addT(name, false, f) }
		add("drop-standalone-scheduling", constEdit(path, map[string]any{"nodeSelector": nil, "tolerations": nil, "affinity": nil, "priorityClassName": nil}))
		add("drop-workload-partitioning", dropPodAnnotation(path, AnnotationWorkloadPartitioning, nil))
		add("drop-autoscaler-pinning", dropPodAnnotation(path, AnnotationSafeToEvict, func(v string) bool { return v == "true" }))
		addT("host-path-to-empty-dir", true, func(transform.Context) (kio.Filter, error) {
			return podsecurity.HostPathToEmptyDir{PodTemplatePath: path}, nil
		})
		for _, t := range podsecurity.Edits() {
			addT(t.Name, t.Strips, func(transform.Context) (kio.Filter, error) {
				return podsecurity.Filter{PodTemplatePath: path, Edit: t.Edit}, nil
			})
		}
		add("control-plane-labels", func(c transform.Context) (kio.Filter, error) {
			return transform.AddLabels{PodTemplatePath: path, Labels: map[string]string{
				LabelHostedControlPlane:    c.HCPNamespace,
				LabelControlPlaneComponent: c.Source.Identity.Name,
			}}, nil
		})
		var scheduling sync.Map // hosted control plane namespace -> its edit
		add("control-plane-scheduling", func(c transform.Context) (kio.Filter, error) {
			if e, ok := scheduling.Load(c.HCPNamespace); ok {
				return e.(kio.Filter), nil
			}
			e, err := transform.NewPodSpecEdit(path, map[string]any{
				"priorityClassName": PriorityClassControlPlane,
				"tolerations": []any{
					map[string]any{"key": TaintControlPlane, "operator": "Equal", "value": "true", "effect": "NoSchedule"},
					map[string]any{"key": TaintCluster, "operator": "Equal", "value": c.HCPNamespace, "effect": "NoSchedule"},
				},
			})
			if err != nil {
				return nil, err
			}
			scheduling.Store(c.HCPNamespace, e)
			return e, nil
		})
		add("pull-secret", constEdit(path, map[string]any{"imagePullSecrets": []any{map[string]any{"name": PullSecretName}}}))
	}
	out = append(out, foundPodSpecStrip()...)
	// On the management cluster the operator's owners (its standalone objects) are not the
	// owners, the management target adds the HostedControlPlane one itself, and an
	// ownerReference to another tenant's object would tie the object's lifetime to it.
	out = append(out, transform.Transform{Name: ProfileHyperShift + "/drop-owner-references", Cluster: routing.ClusterManagement,
		RemovesOwnerReferences: true, Filter: func(transform.Context) (kio.Filter, error) { return transform.DropOwnerReferences{}, nil }})
	for _, resource := range []string{"servicemonitors", "podmonitors"} {
		group := "monitoring.coreos.com"
		out = append(out, transform.Transform{Name: ProfileHyperShift + "/monitor-own-namespace", Cluster: routing.ClusterManagement,
			Match: routing.Match{Group: &group, Resource: resource}, Filter: monitorOwnNamespace},
			transform.Transform{Name: ProfileHyperShift + "/monitor-own-targets", Cluster: routing.ClusterManagement,
				Match: routing.Match{Group: &group, Resource: resource}, Filter: monitorOwnTargets})
	}
	withhold := transform.Withhold{Labels: []string{LabelInjectTrustedCABundle}, Annotations: ServiceCARequestAnnotations()}
	out = append(out, transform.Transform{Name: ProfileHyperShift + "/withhold-management-ca-requests", Cluster: routing.ClusterManagement,
		Applies: withhold.Applies, Filter: func(transform.Context) (kio.Filter, error) { return withhold, nil }})
	return out
}

// LabelInjectTrustedCABundle asks OpenShift's network operator to fill a ConfigMap with the
// cluster's trusted CA bundle (key ca-bundle.crt). On the management cluster that is the
// management cluster's trust, not the guest's: hypershift/withhold-management-ca-requests
// keeps it from the ConfigMaps the profile places there, as HyperShift's own components
// carry none. (The cluster-authentication-operator's OAuth server copies a non-empty bundle
// into /etc/pki, which its read-only root filesystem there refuses: it would not start.)
const LabelInjectTrustedCABundle = "config.openshift.io/inject-trusted-cabundle"

// ServiceCARequestAnnotations are the annotations by which an object asks OpenShift's
// service-ca operator for its service CA bundle (inject-cabundle) or a serving certificate
// it signs (serving-cert-secret-name). On a management cluster that runs OpenShift, that
// operator would answer with the management cluster's service CA, which the guest's clients
// do not trust and which signs for the management cluster's own services:
// hypershift/withhold-management-ca-requests keeps them from every object the profile
// places there, recorded under transform.AnnotationWithheld. The inverse puts them back
// for the operator to read; package serviceca fills the bundle from the HCP's CA
// (topology.hosted.serviceCA), and a serving certificate comes from HyperShift's PKI under a
// configured alias (namespaces.aliases).
func ServiceCARequestAnnotations() []string {
	return []string{
		"service.beta.openshift.io/inject-cabundle", "service.alpha.openshift.io/inject-cabundle",
		"service.beta.openshift.io/serving-cert-secret-name", "service.alpha.openshift.io/serving-cert-secret-name",
	}
}

// monitorOwnNamespace is the filter of hypershift/monitor-own-namespace: a ServiceMonitor or
// PodMonitor that names its own standalone namespace in spec.namespaceSelector.matchNames
// scrapes its namespace in the HCP namespace, where it lands (the management cluster's
// Prometheus scrapes no other: policy/management-fields).
func monitorOwnNamespace(c transform.Context) (kio.Filter, error) {
	own := c.Source.Identity.Namespace
	return kio.FilterAll(yaml.FilterFunc(func(obj *yaml.RNode) (*yaml.RNode, error) {
		names, err := yamlnode.Lookup(obj, "spec", "namespaceSelector", "matchNames")
		if err != nil || names == nil || names.YNode().Kind != yaml.SequenceNode || own == "" || c.HCPNamespace == "" {
			return obj, err
		}
		for _, n := range names.YNode().Content {
			if n.Kind == yaml.ScalarNode && n.Value == own {
				n.Value = c.HCPNamespace
			}
		}
		return obj, nil
	})), nil
}

// monitorOwnTargets is the filter of hypershift/monitor-own-targets: a ServiceMonitor or
// PodMonitor selects, in the HCP namespace, only the Services and pods of its operator, which
// carry its name (namespaces.LabelOperator); the hosted control plane's own components there
// carry none. Without it, the operator's monitor would have the management cluster's
// Prometheus scrape HyperShift's components with the operator's endpoint settings
// (policy/management-fields refuses a monitor that does not require the label).
func monitorOwnTargets(c transform.Context) (kio.Filter, error) {
	return kio.FilterAll(yaml.FilterFunc(func(obj *yaml.RNode) (*yaml.RNode, error) {
		if c.Operator == "" {
			return obj, nil
		}
		return obj, yamlnode.SetString(obj, yaml.NewStringRNode(c.Operator).YNode(), "spec", "selector", "matchLabels", namespaces.LabelOperator)
	})), nil
}

// dropPodAnnotation returns the filter of a transform that removes the annotation key from
// the pods of the object whose pod template is at path, unless keep (when not nil) accepts
// its value; an annotations mapping left empty goes.
func dropPodAnnotation(path []string, key string, keep func(string) bool) func(transform.Context) (kio.Filter, error) {
	// Both paths are built once and only read: the filter runs on every core at once.
	meta := slices.Concat(path, []string{"metadata"})
	annotationsPath := slices.Concat(meta, []string{"annotations"})
	f := kio.FilterAll(yaml.FilterFunc(func(obj *yaml.RNode) (*yaml.RNode, error) {
		annotations, err := yamlnode.Lookup(obj, annotationsPath...)
		if err != nil || annotations == nil || annotations.Field(key) == nil {
			return obj, err
		}
		if err := yamlnode.ClearIf(obj, key, keep, annotationsPath...); err != nil {
			return nil, err
		}
		if len(annotations.Content()) == 0 { // nothing else was there
			return obj, yamlnode.ClearIf(obj, "annotations", nil, meta...)
		}
		return obj, nil
	}))
	return func(transform.Context) (kio.Filter, error) { return f, nil }
}

// constEdit returns the filter of a transform that makes the same pod spec edit on every
// object, built once.
func constEdit(path []string, spec map[string]any) func(transform.Context) (kio.Filter, error) {
	e, err := transform.NewPodSpecEdit(path, spec)
	return func(transform.Context) (kio.Filter, error) { return e, err }
}

// holdsUnnamedPodSpec returns whether a management object holds a pod spec of a kind the
// profile does not name by resource (podspec.PodBearingResources), and is not a shadow copy,
// which nothing runs.
func holdsUnnamedPodSpec() func(obj *yaml.RNode) bool {
	named := map[schema.GroupKind]bool{}
	for _, gk := range podspec.KnownKinds() {
		resource := strings.ToLower(gk.Kind) + "s"
		named[gk] = podspec.IsPodBearing(resource) && podspec.WorkloadGroup(resource) == gk.Group
	}
	return func(obj *yaml.RNode) bool {
		gk := podsecurity.GroupKindOf(obj)
		if _, shadow := namespaces.IsShadowGroup(gk.Group); shadow || named[gk] || !podspec.MayHold(gk) {
			return false
		}
		sites, err := podspec.FindNode(gk, obj.YNode())
		return err != nil || slices.ContainsFunc(sites, func(s podspec.Site) bool { return s.Spec.Node(obj.YNode()) != nil })
	}
}

// foundPodSpecStrip returns the Pod Security strip (host-path-to-empty-dir and the
// podsecurity.Edits) of the kinds the profile does not name by resource: wherever package
// podspec finds a pod spec in a management object (a ReplicationController, a PodTemplate, a
// custom resource that embeds a pod template), but a shadow copy, which nothing runs.
func foundPodSpecStrip() []transform.Transform {
	applies := holdsUnnamedPodSpec()
	edits := append([]podsecurity.Edit{{Name: "host-path-to-empty-dir", Strips: true, Edit: podsecurity.HostPathToEmptyDirEdit}}, podsecurity.Edits()...)
	out := make([]transform.Transform, 0, len(edits))
	for _, e := range edits {
		out = append(out, transform.Transform{Name: ProfileHyperShift + "/" + e.Name, Cluster: routing.ClusterManagement, Strips: e.Strips, Applies: applies,
			Filter: func(transform.Context) (kio.Filter, error) { return podsecurity.Found{Edit: e.Edit}, nil }})
	}
	return out
}
