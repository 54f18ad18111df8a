package config

import (
	"cmp"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/routing"
)

// maxConfigSize bounds the configuration file.
const maxConfigSize = 1 << 20

// Load reads, defaults and validates a configuration file. Errors name the file and the
// field path of every problem.
func Load(path string) (*TopologyConfig, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if fi.Size() > maxConfigSize {
		return nil, fmt.Errorf("%s: %d bytes, larger than the limit of %d", path, fi.Size(), maxConfigSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Decode decodes a configuration, or a part of one, as strictly as Parse (one document; no
// duplicate keys, unknown fields or values of the wrong type), without defaulting or
// validating it: what plan's proposed declarations (a fragment to merge into a
// configuration) are checked with.
func Decode(data []byte) (TopologyConfig, error) {
	cfg, err := decode(data)
	if err != nil {
		return TopologyConfig{}, fmt.Errorf("decode: %w", err)
	}
	return cfg, nil
}

// Parse decodes, defaults and validates a configuration. Unknown fields are errors.
func Parse(data []byte) (*TopologyConfig, error) {
	cfg, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	cfg = Default(cfg)
	if errs := Validate(&cfg); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &cfg, nil
}

// Default fills what the user left out and returns the copy.
func Default(cfg TopologyConfig) TopologyConfig {
	if cfg.Topology.Type == "" {
		cfg.Topology.Type = Standalone
	}
	if cfg.Routing.ClusterRBAC == "" {
		cfg.Routing.ClusterRBAC = routing.ConvertClusterRBAC
	}
	if cfg.Transforms.Profiles == nil && cfg.Topology.Type == Hosted {
		cfg.Transforms.Profiles = []string{hosted.ProfileHyperShift}
	}
	cfg.Routing.Rules = slices.Clone(cfg.Routing.Rules)
	cfg.Transforms.Patches = slices.Clone(cfg.Transforms.Patches)
	cfg.Transforms.Disable = slices.Clone(cfg.Transforms.Disable)
	cfg.Namespaces.Aliases = slices.Clone(cfg.Namespaces.Aliases)
	if h := cfg.Topology.Hosted; h != nil && cfg.Topology.Type == Hosted {
		hosted := *h
		hosted.GuestIdentity = defaultGuestIdentity(h.GuestIdentity)
		if h.ServiceCA != nil {
			ca := *h.ServiceCA
			ca.Key = cmp.Or(ca.Key, DefaultGuestCAKey)
			hosted.ServiceCA = &ca
		}
		cfg.Topology.Hosted = &hosted
	}
	defaultOperators(&cfg)
	cfg.Policy = defaultPolicy(cfg.Policy)
	return cfg
}

// Clusters returns the target clusters of the configured topology.
func (c *TopologyConfig) Clusters() []string {
	if c.Topology.Type == Hosted {
		return []string{routing.ClusterManagement, routing.ClusterGuest}
	}
	return []string{routing.ClusterStandalone}
}

// ResolveTopologyType reads a topology named on a command line (case-insensitive "hosted"
// or "standalone"); "" means cfg's topology, or def when cfg is nil or names none. Another
// name is returned as is, for Validate to refuse.
func ResolveTopologyType(name string, cfg *TopologyConfig, def TopologyType) TopologyType {
	switch strings.ToLower(name) {
	case "hosted":
		return Hosted
	case "standalone":
		return Standalone
	case "":
		if cfg != nil && cfg.Topology.Type != "" {
			return cfg.Topology.Type
		}
		return def
	}
	return TopologyType(name)
}

// Validate checks a defaulted configuration and returns every problem with its field path.
func Validate(cfg *TopologyConfig) field.ErrorList {
	var errs field.ErrorList
	if cfg.APIVersion != APIVersion {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), cfg.APIVersion, "must be "+APIVersion))
	}
	if cfg.Kind != Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), cfg.Kind, "must be "+Kind))
	}
	errs = append(errs, validateTopology(cfg)...)
	errs = append(errs, validateAliases(cfg)...)
	errs = append(errs, validateRouting(cfg)...)
	errs = append(errs, validateTransforms(cfg)...)
	errs = append(errs, validateOperators(cfg)...)
	errs = append(errs, validatePolicy(cfg)...)
	return errs
}

func validateTopology(cfg *TopologyConfig) field.ErrorList {
	var errs field.ErrorList
	topo := field.NewPath("topology")
	switch cfg.Topology.Type {
	case Standalone:
		if cfg.Topology.Hosted != nil {
			errs = append(errs, field.Forbidden(topo.Child("hosted"), "only for type Hosted"))
		}
	case Hosted:
		h := cfg.Topology.Hosted
		if h == nil {
			return append(errs, field.Required(topo.Child("hosted"), "type Hosted needs the HCP namespace and HostedControlPlane name"))
		}
		errs = append(errs, dnsLabel(topo.Child("hosted", "namespace"), h.Namespace)...)
		errs = append(errs, dnsSubdomain(topo.Child("hosted", "hostedControlPlane"), h.HostedControlPlane)...)
		errs = append(errs, validateGuestIdentity(topo.Child("hosted", "guestIdentity"), h.GuestIdentity)...)
		errs = append(errs, h.HyperShift.Validate(topo.Child("hosted", "hypershift"))...)
		if ca := h.ServiceCA; ca != nil {
			p := topo.Child("hosted", "serviceCA")
			errs = append(errs, dnsSubdomain(p.Child("configMap"), ca.ConfigMap)...)
			for _, msg := range validation.IsConfigMapKey(ca.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), ca.Key, msg))
			}
		}
	default:
		errs = append(errs, field.NotSupported(topo.Child("type"), cfg.Topology.Type, []TopologyType{Standalone, Hosted}))
	}
	return errs
}

func validateAliases(cfg *TopologyConfig) field.ErrorList {
	var errs field.ErrorList
	base := field.NewPath("namespaces", "aliases")
	if len(cfg.Namespaces.Aliases) > 0 && cfg.Topology.Type != Hosted {
		return append(errs, field.Forbidden(base, "aliases rename objects on the management cluster: only for type Hosted"))
	}
	sources, targets := map[string]int{}, map[string]int{}
	for i, a := range cfg.Namespaces.Aliases {
		p := base.Index(i)
		errs = append(errs, validateResource(p.Child("resource"), a.Group, a.Resource)...)
		if a.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		if a.HostedName == "" {
			errs = append(errs, field.Required(p.Child("hostedName"), ""))
		} else if strings.Contains(a.HostedName, "--") {
			errs = append(errs, field.Invalid(p.Child("hostedName"), a.HostedName, `must not contain "--", the mark of an encoded name`))
		}
		src := strings.Join([]string{a.Group, a.Resource, a.Namespace, a.Name}, "/")
		if j, dup := sources[src]; dup {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("the same object as namespaces.aliases[%d]", j)))
		}
		sources[src] = i
		tgt := strings.Join([]string{a.Group, a.Resource, a.HostedName}, "/")
		if j, dup := targets[tgt]; dup {
			errs = append(errs, field.Duplicate(p.Child("hostedName"), fmt.Sprintf("also the hostedName of namespaces.aliases[%d]", j)))
		}
		targets[tgt] = i
	}
	return errs
}

func validateRouting(cfg *TopologyConfig) field.ErrorList {
	var errs field.ErrorList
	base := field.NewPath("routing")
	errs = append(errs, oneOf(base.Child("clusterRBAC"), cfg.Routing.ClusterRBAC, routing.ConvertClusterRBAC, routing.RejectClusterRBAC)...)
	table := routing.Table{Rules: cfg.Routing.Rules}
	errs = append(errs, table.FieldErrors(base.Child("rules"), cfg.Clusters())...)
	for i, r := range cfg.Routing.Rules {
		if r.Match.Resource != "" {
			group := ""
			if r.Match.Group != nil {
				group = *r.Match.Group
			}
			errs = append(errs, validateResource(base.Child("rules").Index(i).Child("match", "resource"), group, r.Match.Resource)...)
		}
	}
	return errs
}

func validateTransforms(cfg *TopologyConfig) field.ErrorList {
	var errs field.ErrorList
	base := field.NewPath("transforms")
	var known []string
	for i, p := range cfg.Transforms.Profiles {
		names, ok := hosted.ProfileTransformNames(p)
		if !ok {
			errs = append(errs, field.NotSupported(base.Child("profiles").Index(i), p, hosted.ProfileNames()))
		}
		known = append(known, names...)
	}
	for i, name := range cfg.Transforms.Disable {
		if !slices.Contains(known, name) {
			errs = append(errs, field.NotSupported(base.Child("disable").Index(i), name, known))
		}
	}
	names := map[string]int{}
	for i, p := range cfg.Transforms.Patches {
		path := base.Child("patches").Index(i)
		if p.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), ""))
		} else if j, dup := names[p.Name]; dup {
			errs = append(errs, field.Duplicate(path.Child("name"), fmt.Sprintf("also the name of transforms.patches[%d]", j)))
		}
		names[p.Name] = i
		if p.Cluster != "" && !slices.Contains(cfg.Clusters(), p.Cluster) {
			errs = append(errs, field.NotSupported(path.Child("cluster"), p.Cluster, cfg.Clusters()))
		}
		if _, err := p.Transform(); err != nil {
			errs = append(errs, field.Invalid(path, p.Name, err.Error()))
			continue
		}
		// A patch runs after the engine named the target: one that changed what or whose an
		// object is would write somewhere the plan does not say.
		fields, _ := p.IdentityFields()
		for _, f := range fields {
			child := path.Child("strategicMerge")
			switch {
			case p.JSON6902 != "":
				child = path.Child("json6902")
			case p.Merge != "":
				child = path.Child("merge")
			}
			errs = append(errs, field.Forbidden(child, fmt.Sprintf("the patch touches %s: a patch may not change an object's apiVersion, kind, name, namespace, generateName or ownerReferences (the plan names the target before transforms run)", f)))
		}
	}
	return errs
}

// validateResource checks a plural resource against the default discovery and suggests the
// resource when a kind was written ("Secret" -> "secrets").
func validateResource(p *field.Path, group, resource string) field.ErrorList {
	if resource == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	disc := contract.DefaultDiscovery()
	if _, known := disc.Namespaced(schema.GroupResource{Group: group, Resource: resource}); known {
		return nil
	}
	if r, ok := disc.ResourceForKind(schema.GroupKind{Group: group, Kind: resource}); ok {
		return field.ErrorList{field.Invalid(p, resource, fmt.Sprintf("is a kind, not a resource (did you mean %q?)", r))}
	}
	if strings.ToLower(resource) != resource {
		return field.ErrorList{field.Invalid(p, resource, "resources are lower-case plurals")}
	}
	return nil // a resource of an API the default discovery does not know: accepted
}

func dnsLabel(p *field.Path, v string) field.ErrorList {
	return requiredName(p, v, validation.IsDNS1123Label)
}

func dnsSubdomain(p *field.Path, v string) field.ErrorList {
	return requiredName(p, v, validation.IsDNS1123Subdomain)
}

// requiredName checks a name that must be set and pass check (one of the validation.IsDNS1123
// functions): Required when empty, else one Invalid error for each message of check.
func requiredName(p *field.Path, v string, check func(string) []string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range check(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// oneOf checks an enumerated field: nothing when v is among allowed, else a NotSupported
// error that lists them.
func oneOf[T ~string](p *field.Path, v T, allowed ...T) field.ErrorList {
	if slices.Contains(allowed, v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, v, allowed)}
}

// ShadowedRules returns a warning for each configured routing rule that ties with a
// built-in rule of the topology (equally specific matches that overlap) and loses the tie
// (priority, then name), so that it decides nothing where the built-in one also matches.
// Each names the rule by its path in the file and says how to make it win.
func (c *TopologyConfig) ShadowedRules() []string {
	table := c.RoutingTable().Rules
	builtins := table[:len(table)-len(c.Routing.Rules)]
	var out []string
	for i, r := range c.Routing.Rules {
		for _, b := range builtins {
			if !b.Shadows(r) {
				continue
			}
			out = append(out, fmt.Sprintf("%s (%s): ties with the built-in rule %s (equally specific matches, %d, that overlap) and loses the tie by %s, so it decides nothing where both match: give it priority %d or a more specific match",
				field.NewPath("routing", "rules").Index(i), r.Name, b.Name, r.Match.Specificity(), tieBreak(b, r), b.Priority+1))
		}
	}
	return out
}

// tieBreak says what made the built-in rule b win over the configured rule r.
func tieBreak(b, r routing.Rule) string {
	if b.Priority != r.Priority {
		return fmt.Sprintf("priority (%d against %d)", b.Priority, r.Priority)
	}
	return fmt.Sprintf("name (%q sorts before %q)", b.Name, r.Name)
}

// RoutingTable returns the topology's built-in rules followed by the configured ones.
func (c *TopologyConfig) RoutingTable() *routing.Table {
	var rules []routing.Rule
	switch c.Topology.Type {
	case Hosted:
		rules = routing.HostedDefaults(c.Routing.ClusterRBAC)
	default:
		rules = []routing.Rule{{Name: routing.StandaloneRule, Cluster: routing.ClusterStandalone}}
	}
	return &routing.Table{Rules: append(rules, c.Routing.Rules...)}
}

// defaultGuestIdentity fills the defaults of a guest identity and clones what it shares.
func defaultGuestIdentity(g GuestIdentity) GuestIdentity {
	if g.Server == "" {
		g.Server = DefaultGuestServer
	}
	if g.CAConfigMap == "" {
		g.CAConfigMap = DefaultGuestCAConfigMap
	}
	if g.CAKey == "" {
		g.CAKey = DefaultGuestCAKey
	}
	if g.TokenExpiration == nil {
		g.TokenExpiration = &metav1.Duration{Duration: DefaultTokenExpiration}
	} else {
		d := *g.TokenExpiration
		g.TokenExpiration = &d
	}
	g.ManagementAPI = slices.Clone(g.ManagementAPI)
	g.KubeconfigFields = slices.Clone(g.KubeconfigFields)
	return g
}

func validateGuestIdentity(p *field.Path, g GuestIdentity) field.ErrorList {
	var errs field.ErrorList
	if u, err := url.Parse(g.Server); err != nil {
		errs = append(errs, field.Invalid(p.Child("server"), g.Server, err.Error()))
	} else if u.Scheme != "https" || u.Host == "" {
		errs = append(errs, field.Invalid(p.Child("server"), g.Server, "must be an https:// URL with a host"))
	}
	errs = append(errs, dnsSubdomain(p.Child("caConfigMap"), g.CAConfigMap)...)
	if g.CAKey == "" {
		errs = append(errs, field.Required(p.Child("caKey"), ""))
	}
	for _, msg := range validation.IsConfigMapKey(g.CAKey) {
		errs = append(errs, field.Invalid(p.Child("caKey"), g.CAKey, msg))
	}
	if g.TokenExpiration != nil && g.TokenExpiration.Duration < MinTokenExpiration {
		errs = append(errs, field.Invalid(p.Child("tokenExpiration"), g.TokenExpiration.Duration.String(), "must be at least 10m, the least lifetime the TokenRequest API grants"))
	}
	for i, m := range g.ManagementAPI {
		mp := p.Child("managementAPI").Index(i)
		if m.Resource == "" {
			errs = append(errs, field.Required(mp.Child("resource"), "a pod-bearing resource (deployments, statefulsets, daemonsets, replicasets, jobs, cronjobs, pods) or serviceaccounts"))
		} else if !translate.IsIdentityResource(m.Resource) {
			errs = append(errs, field.NotSupported(mp.Child("resource"), m.Resource, append(podspec.PodBearingResources(), "serviceaccounts")))
		}
	}
	for i, k := range g.KubeconfigFields {
		kp := p.Child("kubeconfigFields").Index(i)
		errs = append(errs, dnsLabel(kp.Child("namespace"), k.Namespace)...)
		errs = append(errs, dnsSubdomain(kp.Child("name"), k.Name)...)
		for _, msg := range validation.IsConfigMapKey(k.Key) {
			errs = append(errs, field.Invalid(kp.Child("key"), k.Key, msg))
		}
		if k.Field == "" || slices.Contains(strings.Split(k.Field, "."), "") {
			errs = append(errs, field.Invalid(kp.Child("field"), k.Field, "a dotted path of a field in the document, e.g. kubeClientConfig.kubeConfig"))
		}
	}
	return errs
}
