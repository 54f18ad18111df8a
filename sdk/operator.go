package sdk

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/contract"
)

// Defaults of an Operator's bounds.
const (
	// DefaultMaxReconciles bounds how often one request is reconciled in one run.
	DefaultMaxReconciles = 10
	// DefaultControllerTimeout bounds how long one controller may run. Upstream gives each
	// controller 1s; the fake client is in memory, so 2s leaves room for a loaded machine.
	DefaultControllerTimeout = 2 * time.Second
)

// Operator is an operator written with controller-runtime, run offline under the MOM
// contract: its controllers read the input directory through a fake client and every write
// they make is recorded into the output directory. Build one as a struct literal; the zero
// values of the optional fields mean the defaults.
type Operator struct {
	// Name names the operator: the root command, the source component of its events and the
	// default involved object of its events (a Deployment of that name).
	Name string
	// InputResources declares what apply-configuration reads (`input-resources`).
	InputResources contract.InputResources
	// OutputResources declares what apply-configuration may write, per class
	// (`output-resources`). Every write is filed under the classes whose declarations match
	// it; a write no class declares fails the run.
	OutputResources contract.OutputResources
	// Scheme holds the Go types the controllers use. Objects of kinds it does not know are
	// served as unstructured. Nil means a scheme with client-go's types only.
	Scheme *runtime.Scheme
	// CRDs tell the fake API server about custom resources that neither the scheme nor
	// discovery describe well enough: their plural, their scope and whether they have a
	// status subresource. Optional.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Controllers are the operator's controllers; names must be unique.
	Controllers []Controller
	// Events says where the events of the controllers go; the zero value means the defaults.
	Events EventSource
	// MaxReconciles bounds how often one request is reconciled while it asks to be requeued;
	// 0 means DefaultMaxReconciles.
	MaxReconciles int
	// ControllerTimeout bounds each controller's run; 0 means DefaultControllerTimeout.
	ControllerTimeout time.Duration
	// MetadataNameKey spells the object name key of the metadata files apply-configuration
	// writes: contract.NameKeyName ("name", the default when empty), read by library-go since
	// 2025 and by topolayer, or contract.NameKeyLegacy ("mame"), the only spelling the
	// multi-operator-manager harness at 90ec5f2 (December 2024 library-go) reads.
	MetadataNameKey contract.NameKey
}

// Controller is one named controller: a reconciler factory and the requests to reconcile.
type Controller struct {
	// Name names the controller in controller-results.yaml and --controllers, and is the
	// controllerInstanceName of every write it makes.
	Name string
	// New builds the controller's reconciler from what the run provides. It is called once
	// per run, with a client that serves the input directory and records writes.
	New func(Deps) (reconcile.Reconciler, error)
	// Requests are reconciled in order, typically the singleton the controller watches
	// (reconcile.Request{NamespacedName: types.NamespacedName{Name: "cluster"}}). None means
	// one empty request.
	Requests []reconcile.Request
}

// Deps are what a controller's reconciler is built from. Reconcilers keep using the
// controller-runtime interfaces they already use; nothing here is contract-specific.
type Deps struct {
	// Client serves the objects of the input directory and records every write. Writes are
	// applied to the fake client too, so a reconciler sees its own writes when requeued, but
	// each controller starts again from the input directory.
	Client client.Client
	// Recorder records events with the events API of controller-runtime managers
	// (mgr.GetEventRecorder). Events are written as core/v1 Events, see EventSource.
	Recorder EventRecorder
	// LegacyRecorder records events with the legacy API (mgr.GetEventRecorderFor).
	LegacyRecorder record.EventRecorder
	// Clock is fixed at the run's --now; use it instead of time.Now for deterministic output.
	Clock clock.PassiveClock
	// Scheme is the operator's scheme.
	Scheme *runtime.Scheme
}

// Options are the arguments of one apply-configuration run.
type Options struct {
	// InputDir is the must-gather-like input directory (--input-dir).
	InputDir string
	// OutputDir receives the recorded writes (--output-dir); it must be empty or absent.
	OutputDir string
	// Now is the time the controllers see (--now); zero means the current time.
	Now time.Time
	// Controllers selects controllers as --controllers does: `*` enables all, `name` enables
	// one, `-name` disables one; the first entry naming a controller decides, else it runs iff
	// `*` is present. Empty means `*`.
	Controllers []string
}

// Errors a run returns, to test with errors.Is.
var (
	// ErrUndeclared marks a write that no class of the output-resources declares.
	ErrUndeclared = errors.New("not declared in output-resources")
	// ErrControllerFailed marks a controller that failed, panicked or timed out.
	ErrControllerFailed = errors.New("controller failed")
)

// Validate checks the operator's definition: a name, uniquely named controllers with
// factories, and declarations that the contract's parsers accept.
func (o *Operator) Validate() error {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("operator: name is required"))
	}
	if len(o.Controllers) == 0 {
		errs = append(errs, errors.New("operator: at least one controller is required"))
	}
	seen := map[string]bool{}
	for i, c := range o.Controllers {
		switch {
		case c.Name == "" || c.Name == "*" || c.Name[0] == '-' || strings.Contains(c.Name, ","):
			errs = append(errs, fmt.Errorf("controllers[%d]: name %q: must be non-empty, not '*', and neither start with '-' nor contain ','", i, c.Name))
		case seen[c.Name]:
			errs = append(errs, fmt.Errorf("controllers[%d]: name %q: duplicate", i, c.Name))
		}
		seen[c.Name] = true
		if c.New == nil {
			errs = append(errs, fmt.Errorf("controllers[%d] %s: New is required", i, c.Name))
		}
	}
	if data, err := contract.MarshalOutputResources(&o.OutputResources); err != nil {
		errs = append(errs, err)
	} else if _, err := contract.ParseOutputResources(data); err != nil {
		errs = append(errs, fmt.Errorf("output-resources: %w", err))
	}
	if data, err := contract.MarshalInputResources(&o.InputResources); err != nil {
		errs = append(errs, err)
	} else if _, err := contract.ParseInputResources(data); err != nil {
		errs = append(errs, fmt.Errorf("input-resources: %w", err))
	}
	return errors.Join(errs...)
}

// Run is ApplyConfiguration for callers that have the flags' values at hand: it reads
// inputDir, writes outputDir, and fails when a controller failed or a write was undeclared.
func (o *Operator) Run(ctx context.Context, inputDir, outputDir string, now time.Time, controllers []string) error {
	_, err := o.ApplyConfiguration(ctx, Options{InputDir: inputDir, OutputDir: outputDir, Now: now, Controllers: controllers})
	return err
}

// selectControllers applies the --controllers rules to the operator's controllers and
// returns the names that run. Unknown names are an error.
func (o *Operator) selectControllers(flags []string) (map[string]bool, error) {
	if len(flags) == 0 {
		flags = []string{"*"}
	}
	known := map[string]bool{}
	for _, c := range o.Controllers {
		known[c.Name] = true
	}
	var errs []error
	for _, f := range flags {
		name := f
		if len(name) > 0 && name[0] == '-' {
			name = name[1:]
		}
		if f != "*" && !known[name] {
			errs = append(errs, fmt.Errorf("--controllers: unknown controller %q (known: %v)", name, slices.Sorted(maps.Keys(known))))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	enabled := map[string]bool{}
	all := slices.Contains(flags, "*")
	for _, c := range o.Controllers {
		enabled[c.Name] = all
		for _, f := range flags {
			if f == c.Name {
				enabled[c.Name] = true
				break
			}
			if f == "-"+c.Name {
				enabled[c.Name] = false
				break
			}
		}
	}
	return enabled, nil
}
