package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	fieldpath "k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/topology"
)

// ValidateOptions are the options of `topolayer validate`.
type ValidateOptions struct {
	ConfigFile string // --config
	Output     string // -o: "", json or yaml

	IOStreams
}

// ValidationResult is what `validate -o json|yaml` prints.
type ValidationResult struct {
	// File is the configuration file.
	File string `json:"file"`
	// Valid is true when the file has no error.
	Valid bool `json:"valid"`
	// Errors lists every problem, with the path of its field when it has one.
	Errors []ValidationError `json:"errors,omitempty"`
	// Warnings are problems that do not make the file invalid (a rule that a built-in one
	// shadows).
	Warnings []string `json:"warnings,omitempty"`
	// Topology, RoutingRules (built-in and configured), ConfiguredRules and Transforms sum up
	// a valid configuration.
	Topology        string `json:"topology,omitempty"`
	RoutingRules    int    `json:"routingRules,omitempty"`
	ConfiguredRules int    `json:"configuredRules,omitempty"`
	Transforms      int    `json:"transforms,omitempty"`
}

// ValidationError is one problem of a configuration.
type ValidationError struct {
	// Field is the field's path in the file ("routing.rules[3].match.resource"); empty when
	// the problem is the file's (unreadable, not YAML, several documents).
	Field string `json:"field,omitempty"`
	// Type is the kind of problem, as apimachinery's field errors name it ("FieldValueInvalid").
	Type string `json:"type,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// NewCmdValidate builds `topolayer validate`.
func NewCmdValidate(streams IOStreams) *cobra.Command {
	o := &ValidateOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "validate --config FILE",
		Short: "Check a topology configuration and explain every error with its field path",
		Long: `Validate reads a TopologyConfig, fills in its defaults and checks it whole: every problem is
reported with the path of its field in the file. It exits non-zero when there is any. A
configured routing rule that a built-in rule shadows (they tie, and the built-in one wins the
tie wherever both match) is a warning. With -o json or yaml, the result is one document
listing the errors with their field paths and the warnings, also when the file is invalid.`,
		Example: `  topolayer validate --config examples/hosted.yaml
  topolayer validate --config examples/hosted.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	cmd.Flags().StringVar(&o.ConfigFile, "config", o.ConfigFile, "topology configuration file (TopologyConfig)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: json|yaml (default: one line, and the errors)")
	return cmd
}

// Validate checks the flags.
func (o *ValidateOptions) Validate() error {
	var errs []error
	if o.ConfigFile == "" {
		errs = append(errs, errors.New("--config is required"))
	}
	switch o.Output {
	case "", "json", "yaml":
	default:
		errs = append(errs, fmt.Errorf("--output %q: must be json or yaml", o.Output))
	}
	return errors.Join(errs...)
}

// Run loads the configuration and reports what it amounts to.
func (o *ValidateOptions) Run(context.Context) error {
	res, err := o.check()
	printed, perr := printData(o.Out, o.Output, res)
	switch {
	case perr != nil:
		return perr
	case !printed:
		for _, w := range res.Warnings {
			fmt.Fprintf(o.ErrOut, "warning: %s: %s\n", o.ConfigFile, w)
		}
		if err == nil {
			fmt.Fprintf(o.Out, "%s: valid: topology %s, %d routing rules (%d configured), %d transforms\n",
				o.ConfigFile, res.Topology, res.RoutingRules, res.ConfiguredRules, res.Transforms)
		}
	}
	return err
}

// check validates the file and returns the result, and the error that makes it invalid.
func (o *ValidateOptions) check() (ValidationResult, error) {
	res := ValidationResult{File: o.ConfigFile}
	cfg, err := config.Load(o.ConfigFile)
	if err == nil {
		transforms, terr := topology.Transforms(cfg)
		if terr != nil {
			err = fmt.Errorf("%s: %w", o.ConfigFile, terr)
		} else {
			res.Valid = true
			res.Warnings = cfg.ShadowedRules()
			commands, cerr := operatorCommands(cfg, filepath.Dir(o.ConfigFile))
			res.Warnings = append(res.Warnings, commands...)
			if cerr != nil {
				res.Valid = false
				res.Errors = validationErrors(cerr)
				return res, fmt.Errorf("%s: %w", o.ConfigFile, cerr)
			}
			res.Topology = string(cfg.Topology.Type)
			res.RoutingRules, res.ConfiguredRules, res.Transforms = len(cfg.RoutingTable().Rules), len(cfg.Routing.Rules), len(transforms)
			return res, nil
		}
	}
	res.Errors = validationErrors(err)
	return res, err
}

// validationErrors lists the problems in err: each field error of an aggregate with its
// path, else err itself.
func validationErrors(err error) []ValidationError {
	var agg utilerrors.Aggregate
	errs := []error{err}
	if errors.As(err, &agg) {
		errs = agg.Errors()
	}
	out := make([]ValidationError, 0, len(errs))
	for _, e := range errs {
		var fe *field.Error
		if errors.As(e, &fe) {
			out = append(out, ValidationError{Field: fe.Field, Type: string(fe.Type), Message: fe.ErrorBody()})
			continue
		}
		out = append(out, ValidationError{Message: e.Error()})
	}
	return out
}

// operatorCommands checks that each operator's command resolves as topolayer run will run it:
// a path (relative to the configuration's directory) must be an executable file, an error
// when it is not; a bare name is looked up in PATH, a warning when it is not there (the
// machine that runs the operators may have it).
func operatorCommands(cfg *config.TopologyConfig, baseDir string) (warnings []string, err error) {
	for i, op := range cfg.Operators {
		if len(op.Command) == 0 {
			continue // an operator linked in process
		}
		name, field := op.Command[0], fmt.Sprintf("operators[%d].command[0]", i)

		if filepath.Base(name) == name {
			if _, err := exec.LookPath(name); err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: %s is not in PATH here; topolayer run needs it where it runs", field, name))
			}
			continue
		}
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(baseDir, path)
		}
		at := fieldpath.NewPath("operators").Index(i).Child("command").Index(0)
		info, statErr := os.Stat(path)
		switch {
		case statErr != nil:
			return warnings, utilerrors.NewAggregate([]error{fieldpath.NotFound(at, name)})
		case info.IsDir() || info.Mode()&0o111 == 0:
			return warnings, utilerrors.NewAggregate([]error{fieldpath.Invalid(at, name, "not an executable file")})
		}
	}
	return warnings, nil
}
