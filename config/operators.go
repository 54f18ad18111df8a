package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// Operator is one MOM contract operator that topolayer runs (topolayer run) and whose
// outputs it applies.
type Operator struct {
	// Name is the operator's name: the field manager of its writes, the value of the
	// topolayer.dev/operator label, and the key of its status and metrics.
	Name string `json:"name"`
	// Command is the contract binary and its leading arguments; topolayer appends
	// input-resources, output-resources or apply-configuration and their flags. A relative
	// path is resolved against the configuration file's directory.
	Command []string `json:"command"`
	// Env is the whole environment of the operator's runs besides PATH and HOME: nothing of
	// topolayer's own environment is passed on.
	Env map[string]string `json:"env,omitempty"`
	// EnvFromInputs are variables of the operator's environment read, at every run, from
	// its gathered inputs (the cluster Proxy's status.httpsProxy; its trusted CA as a file),
	// as a resident operator's Deployment receives them: a change of the value is an input
	// change that runs it again. An absent object, field or empty value leaves the variable
	// unset. Each object must be among its declared inputs (topolayer run refuses to start
	// otherwise). Linked in-process operators have no environment of their own and refuse it.
	EnvFromInputs []InputEnvVar `json:"envFromInputs,omitempty"`
	// Controllers, when set, is passed as --controllers: only those controllers run.
	Controllers []string `json:"controllers,omitempty"`
	// Egress are the only network destinations the operator's runs may reach over TCP
	// (none by default: the sandbox has no network): HOST:PORT (a DNS name, resolved by
	// topolayer at every run and resolvable in the sandbox), IP:PORT, [IPv6]:PORT, or
	// CIDR:PORT ([CIDR]:PORT for IPv6). Wildcards, unspecified addresses and networks of
	// every address are refused. topolayer decides each connection against this list; a
	// run that failed reaching something else says so in its status (networkNeeded).
	Egress []string `json:"egress,omitempty"`
	// ServiceAccount, NAMESPACE/NAME, is impersonated by every write of the operator's plans
	// (on the management cluster and the guest alike): the operator can never write more
	// than that service account may. Empty: topolayer's own identity writes.
	ServiceAccount string `json:"serviceAccount,omitempty"`
	// Limits bound every run.
	Limits OperatorLimits `json:"limits,omitzero"`
	// Resync, when set, runs the operator again that long after its last run when nothing
	// it reads changed (trigger "resync"), as a resident operator's informers resync: what
	// a controller left for later (a wait, a retry) happens without an input change. A run
	// that changes nothing writes nothing. Default: off (runs follow input changes only).
	Resync *metav1.Duration `json:"resync,omitempty"`
	// Draws is how many times a run that follows a change of what the operator reads (and
	// its first run) runs it on the same inputs, at the same time: the contract's
	// apply-configuration runs an operator's controllers in a random order, each run a new
	// draw, and a controller that acts on what another one of the same process learned (the
	// cluster-authentication-operator's resource syncer, told by its config observer to copy
	// or delete an identity provider's Secret) acts only in the draws where that one ran
	// first. The draw that wrote the most (mutations, and Deletes the contract refused) is
	// applied; the others are discarded. Runs on unchanged inputs (resync) and those its own
	// writes trigger draw once. `topolayer test determinism` names the controllers that need
	// it. At most 16. Default 1.
	Draws int `json:"draws,omitempty"`
	// OnControllerFailure is what a run does when the operator exits non-zero but wrote a
	// readable output directory and controller-results.yaml (the contract writes outputs
	// even when controllers fail): Apply (the default) applies what was written and reports
	// the run Degraded, naming each failed controller; Refuse applies nothing.
	OnControllerFailure ControllerFailurePolicy `json:"onControllerFailure,omitempty"`
	// Supplements add to the operator's own declarations what it reads or writes without
	// declaring it, in the same format as its input-resources and output-resources. A
	// mutation the operator wrote under Unspecified is placed in the class a supplement
	// declares it in; plans name the supplement.
	Supplements Supplements `json:"supplements,omitzero"`
	// Adopt, when present, makes the operator's writes take over existing objects that carry
	// no topolayer mark (no topolayer.dev/operator label, no standalone identity annotations)
	// instead of refusing them: same object, topolayer's marks added, the field ownership of
	// Adopt.FieldManagers moved to the operator's field manager. Objects marked by another
	// operator are refused either way.
	Adopt *Adoption `json:"adopt,omitempty"`
}

// Adoption is an operator's adoption policy (Operator.Adopt).
type Adoption struct {
	// FieldManagers are the previous managers of the objects adopted (a resident operator's
	// field manager, e.g. authentication-operator) whose server-side-apply field ownership
	// moves to the operator's field manager, so that no field is orphaned or fought over.
	FieldManagers []string `json:"fieldManagers,omitempty"`
}

// MaxDraws bounds Operator.Draws: each draw is a run of the operator.
const MaxDraws = 16

// ControllerFailurePolicy says what a run whose controllers partly failed applies.
type ControllerFailurePolicy string

const (
	// ApplyOnControllerFailure applies the outputs of a run that exited non-zero with
	// readable outputs and controller results; the run is Degraded.
	ApplyOnControllerFailure ControllerFailurePolicy = "Apply"
	// RefuseOnControllerFailure applies nothing of such a run; it is Failed.
	RefuseOnControllerFailure ControllerFailurePolicy = "Refuse"
)

// Supplements are declarations the configuration adds to an operator's own.
type Supplements struct {
	// Inputs are more applyConfigurationResources the operator reads.
	Inputs *contract.InputResources `json:"inputs,omitempty"`
	// Outputs are more resources the operator writes, by class.
	Outputs *contract.OutputResources `json:"outputs,omitempty"`
}

// OperatorLimits bound one run of an operator.
type OperatorLimits struct {
	// Timeout kills a run that takes longer. Default 2m.
	Timeout metav1.Duration `json:"timeout,omitzero"`
	// Memory limits the run's address space. Default 2Gi (Go binaries reserve more virtual
	// memory than they use).
	Memory *resource.Quantity `json:"memory,omitempty"`
	// OutputSize rejects an output directory larger than this. Default 64Mi.
	OutputSize *resource.Quantity `json:"outputSize,omitempty"`
}

// Scheduler bounds when and how often operators run.
type Scheduler struct {
	// Debounce is how long to wait after the first change of a burst before running: the
	// changes inside it make one run. Default 2s.
	Debounce *metav1.Duration `json:"debounce,omitempty"`
	// Cooldown is the least time between the end of an operator's run and the start of
	// its next. Default 5s.
	Cooldown *metav1.Duration `json:"cooldown,omitempty"`
	// MaxConcurrent is how many operators may run at once. Default 2.
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	// MutationsPerMinute is each operator's budget of applied mutations per minute; a run
	// that spent it delays the next. Default 600; -1 turns the budget off.
	MutationsPerMinute int `json:"mutationsPerMinute,omitempty"`
	// HotLoopThreshold is how many runs in a row, triggered only by the operator's own
	// writes and never converging, make a hot loop (damped and reported). Default 5.
	HotLoopThreshold int `json:"hotLoopThreshold,omitempty"`
}

// Manager configures the process that runs the operators (topolayer run).
type Manager struct {
	// Namespace holds the manager's Lease, status objects and events in the standalone
	// topology (hosted: always the HCP namespace). Default topolayer-system.
	Namespace string `json:"namespace,omitempty"`
	// WorkDir holds the input and output directories of the runs. Default: a new
	// temporary directory.
	WorkDir string `json:"workDir,omitempty"`
	// MetricsAddress serves Prometheus metrics; "0" turns them off. Default 127.0.0.1:8080,
	// loopback only: metrics name operators and objects, so serving them beyond the host is
	// a choice (":8080" for every interface).
	MetricsAddress string `json:"metricsAddress,omitempty"`
	// LeaderElection makes one of several replicas run the operators. Default true.
	LeaderElection *bool `json:"leaderElection,omitempty"`
}

// Gather configures how inputs are read back from the topology (topolayer gather and the
// input directories of topolayer run).
type Gather struct {
	// Projections fill config singletons from fields of the HostedControlPlane (hosted
	// only), when an operator reads the singleton and the guest has none. Default: the
	// cluster Authentication's spec from spec.configuration.authentication, and the same for
	// apiservers, oauths, proxies and images.
	Projections []Projection `json:"projections,omitempty"`
}

// Projection fills one field of a standalone config singleton from a field of the
// HostedControlPlane.
type Projection struct {
	// Group, Version, Resource and Kind name the filled object's type.
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	Kind     string `json:"kind"`
	// Name is the filled object's name (config singletons are named cluster).
	Name string `json:"name"`
	// Field is the dotted path filled in the object, e.g. spec.
	Field string `json:"field"`
	// From is the dotted path read in the HostedControlPlane, e.g.
	// spec.configuration.authentication.
	From string `json:"from"`
}

// defaultProjections are the projections of a hosted configuration that names none: the
// HostedControlPlane's spec.configuration fields that HyperShift itself projects into the
// guest's config.openshift.io singletons.
var defaultProjections = []Projection{
	configProjection("authentications", "Authentication", "authentication"),
	configProjection("apiservers", "APIServer", "apiServer"),
	configProjection("oauths", "OAuth", "oauth"),
	configProjection("proxies", "Proxy", "proxy"),
	configProjection("images", "Image", "image"),
}

// DefaultProjections returns the projections of a hosted configuration that names none (a
// copy, the caller's to change).
func DefaultProjections() []Projection { return slices.Clone(defaultProjections) }

func configProjection(resource, kind, field string) Projection {
	return Projection{Group: "config.openshift.io", Version: "v1", Resource: resource, Kind: kind, Name: "cluster",
		Field: "spec", From: "spec.configuration." + field}
}

// Default values of the scheduler, the operators' limits and the manager.
const (
	DefaultDebounce           = 2 * time.Second
	DefaultCooldown           = 5 * time.Second
	DefaultMaxConcurrent      = 2
	DefaultMutationsPerMinute = 600
	DefaultHotLoopThreshold   = 5
	DefaultTimeout            = 2 * time.Minute
	DefaultManagerNamespace   = "topolayer-system"
	DefaultMetricsAddress     = "127.0.0.1:8080"
)

// Default sizes of the operators' limits.
var (
	defaultMemory     = resource.MustParse("2Gi")
	defaultOutputSize = *resource.NewQuantity(contract.DefaultMaxOutputSize, resource.BinarySI) // 64Mi, as the command line reads
)

// FieldPath splits a dotted path into its fields.
func FieldPath(dotted string) []string { return strings.Split(dotted, ".") }

func defaultOperators(cfg *TopologyConfig) {
	ops := make([]Operator, len(cfg.Operators))
	for i, op := range cfg.Operators {
		if op.Limits.Timeout.Duration == 0 {
			op.Limits.Timeout.Duration = DefaultTimeout
		}
		if op.Limits.Memory == nil {
			m := defaultMemory.DeepCopy()
			op.Limits.Memory = &m
		}
		if op.Limits.OutputSize == nil {
			s := defaultOutputSize.DeepCopy()
			op.Limits.OutputSize = &s
		}
		if op.OnControllerFailure == "" {
			op.OnControllerFailure = ApplyOnControllerFailure
		}
		ops[i] = op
	}
	cfg.Operators = ops
	s := &cfg.Scheduler
	if s.Debounce == nil {
		s.Debounce = &metav1.Duration{Duration: DefaultDebounce}
	}
	if s.Cooldown == nil {
		s.Cooldown = &metav1.Duration{Duration: DefaultCooldown}
	}
	if s.MaxConcurrent == 0 {
		s.MaxConcurrent = DefaultMaxConcurrent
	}
	if s.MutationsPerMinute == 0 {
		s.MutationsPerMinute = DefaultMutationsPerMinute
	}
	if s.HotLoopThreshold == 0 {
		s.HotLoopThreshold = DefaultHotLoopThreshold
	}
	m := &cfg.Manager
	if m.Namespace == "" {
		m.Namespace = DefaultManagerNamespace
	}
	if m.MetricsAddress == "" {
		m.MetricsAddress = DefaultMetricsAddress
	}
	if m.LeaderElection == nil {
		yes := true
		m.LeaderElection = &yes
	}
	if cfg.Gather.Projections == nil && cfg.Topology.Type == Hosted {
		cfg.Gather.Projections = defaultProjections
	}
}

// forbiddenEnv are variables an operator's environment must not set: they would give an
// offline run a way to a cluster or through a proxy.
var forbiddenEnv = []string{"KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}

func validateOperators(cfg *TopologyConfig) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("operators")
	seen := map[string]int{}
	for i, op := range cfg.Operators {
		pi := p.Index(i)
		errs = append(errs, dnsLabel(pi.Child("name"), op.Name)...)
		if j, dup := seen[op.Name]; dup && op.Name != "" {
			errs = append(errs, field.Duplicate(pi.Child("name"), fmt.Sprintf("%s (also operators[%d])", op.Name, j)))
		}
		seen[op.Name] = i
		if len(op.Command) == 0 || op.Command[0] == "" {
			errs = append(errs, field.Required(pi.Child("command"), "the operator's contract binary"))
		}
		for k := range op.Env {
			for _, f := range forbiddenEnv {
				if strings.EqualFold(k, f) {
					errs = append(errs, field.Forbidden(pi.Child("env").Key(k), "operators run offline: no cluster access, no fixed proxy (envFromInputs reads the cluster Proxy's)"))
				}
			}
		}
		errs = append(errs, validateInputEnv(pi.Child("envFromInputs"), op)...)
		errs = append(errs, validateEgress(pi.Child("egress"), op.Egress)...)
		for j, c := range op.Controllers {
			if c == "" || strings.ContainsAny(c, ", ") {
				errs = append(errs, field.Invalid(pi.Child("controllers").Index(j), c, "a controller name: not empty, no comma or space"))
			}
		}
		if op.ServiceAccount != "" {
			ns, name, ok := strings.Cut(op.ServiceAccount, "/")
			if !ok {
				errs = append(errs, field.Invalid(pi.Child("serviceAccount"), op.ServiceAccount, "must be NAMESPACE/NAME"))
			} else {
				errs = append(errs, dnsLabel(pi.Child("serviceAccount"), ns)...)
				errs = append(errs, dnsSubdomain(pi.Child("serviceAccount"), name)...)
			}
		}
		errs = append(errs, oneOf(pi.Child("onControllerFailure"), op.OnControllerFailure, ApplyOnControllerFailure, RefuseOnControllerFailure)...)
		errs = append(errs, op.Supplements.validate(pi.Child("supplements"))...)
		if op.Adopt != nil {
			fp := pi.Child("adopt", "fieldManagers")
			for j, m := range op.Adopt.FieldManagers {
				if strings.TrimSpace(m) == "" {
					errs = append(errs, field.Required(fp.Index(j), "a field manager name"))
				}
			}
		}
		if op.Draws < 0 || op.Draws > MaxDraws {
			errs = append(errs, field.Invalid(pi.Child("draws"), op.Draws, fmt.Sprintf("must be between 1 and %d (leave it out for 1)", MaxDraws)))
		}
		if op.Resync != nil && op.Resync.Duration <= 0 {
			errs = append(errs, field.Invalid(pi.Child("resync"), op.Resync.Duration.String(), "must be positive (leave it out to turn resync off)"))
		}
		l := pi.Child("limits")
		if op.Limits.Timeout.Duration < 0 {
			errs = append(errs, field.Invalid(l.Child("timeout"), op.Limits.Timeout.Duration.String(), "must be positive"))
		}
		if op.Limits.Memory != nil && op.Limits.Memory.Sign() <= 0 {
			errs = append(errs, field.Invalid(l.Child("memory"), op.Limits.Memory.String(), "must be positive"))
		}
		if op.Limits.OutputSize != nil && op.Limits.OutputSize.Sign() <= 0 {
			errs = append(errs, field.Invalid(l.Child("outputSize"), op.Limits.OutputSize.String(), "must be positive"))
		}
	}
	s, sp := cfg.Scheduler, field.NewPath("scheduler")
	if s.Debounce != nil && s.Debounce.Duration < 0 {
		errs = append(errs, field.Invalid(sp.Child("debounce"), s.Debounce.Duration.String(), "must not be negative"))
	}
	if s.Cooldown != nil && s.Cooldown.Duration < 0 {
		errs = append(errs, field.Invalid(sp.Child("cooldown"), s.Cooldown.Duration.String(), "must not be negative"))
	}
	if s.MaxConcurrent < 0 {
		errs = append(errs, field.Invalid(sp.Child("maxConcurrent"), s.MaxConcurrent, "must be at least 1"))
	}
	if s.MutationsPerMinute < -1 {
		errs = append(errs, field.Invalid(sp.Child("mutationsPerMinute"), s.MutationsPerMinute, "must be positive, or -1 for no budget"))
	}
	if s.HotLoopThreshold < 0 {
		errs = append(errs, field.Invalid(sp.Child("hotLoopThreshold"), s.HotLoopThreshold, "must be at least 1"))
	}
	if cfg.Manager.Namespace != "" {
		errs = append(errs, dnsLabel(field.NewPath("manager", "namespace"), cfg.Manager.Namespace)...)
	}
	if cfg.Manager.WorkDir != "" && !filepath.IsAbs(cfg.Manager.WorkDir) {
		errs = append(errs, field.Invalid(field.NewPath("manager", "workDir"), cfg.Manager.WorkDir, "must be an absolute path"))
	}
	gp := field.NewPath("gather", "projections")
	if len(cfg.Gather.Projections) > 0 && cfg.Topology.Type != Hosted {
		errs = append(errs, field.Forbidden(gp, "only for type Hosted"))
	}
	for i, pr := range cfg.Gather.Projections {
		pi := gp.Index(i)
		errs = append(errs, validateResource(pi, pr.Group, pr.Resource)...)
		for _, f := range []struct{ name, v string }{{"version", pr.Version}, {"kind", pr.Kind}, {"name", pr.Name}, {"field", pr.Field}, {"from", pr.From}} {
			if f.v == "" {
				errs = append(errs, field.Required(pi.Child(f.name), ""))
			}
		}
		for _, f := range []struct{ name, v string }{{"field", pr.Field}, {"from", pr.From}} {
			if f.v != "" && (strings.HasPrefix(f.v, ".") || strings.HasSuffix(f.v, ".") || strings.Contains(f.v, "..")) {
				errs = append(errs, field.Invalid(pi.Child(f.name), f.v, "a dotted field path, e.g. spec.configuration.authentication"))
			}
		}
		if pr.Field == "metadata" || strings.HasPrefix(pr.Field, "metadata.") {
			errs = append(errs, field.Forbidden(pi.Child("field"), "projections fill spec or status, never metadata"))
		}
	}
	return errs
}

// Operator returns the configured operator named name.
func (c *TopologyConfig) Operator(name string) (*Operator, bool) {
	for i := range c.Operators {
		if c.Operators[i].Name == name {
			return &c.Operators[i], true
		}
	}
	return nil, false
}

// validate checks that the supplements are well-formed declarations.
func (s Supplements) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Inputs != nil {
		if err := s.Inputs.Validate(); err != nil {
			errs = append(errs, field.Invalid(p.Child("inputs"), "", err.Error()))
		}
	}
	if s.Outputs != nil {
		if err := s.Outputs.Validate(); err != nil {
			errs = append(errs, field.Invalid(p.Child("outputs"), "", err.Error()))
		}
	}
	return errs
}

// Supplement returns the operator's declarations with its configured supplements added:
// new values, in and out are not changed. in or out may be nil.
func (op *Operator) Supplement(in *contract.InputResources, out *contract.OutputResources) (*contract.InputResources, *contract.OutputResources) {
	return contract.MergeInputResources(in, op.Supplements.Inputs), contract.MergeOutputResources(out, op.Supplements.Outputs)
}

// validateEgress checks an operator's egress entries: each an endpoint
// (runner.ParseEndpoint), none twice.
func validateEgress(p *field.Path, egress []string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, s := range egress {
		e, err := runner.ParseEndpoint(s)
		if err != nil {
			errs = append(errs, field.Invalid(p.Index(i), s, strings.TrimPrefix(err.Error(), strconv.Quote(s)+": ")))
			continue
		}
		if j, dup := seen[e.String()]; dup {
			errs = append(errs, field.Duplicate(p.Index(i), fmt.Sprintf("%s (also egress[%d])", s, j)))
		}
		seen[e.String()] = i
	}
	return errs
}
