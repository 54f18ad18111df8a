package config

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
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

// Parse decodes, defaults and validates a configuration. Unknown fields are errors.
func Parse(data []byte) (*TopologyConfig, error) {
	var cfg TopologyConfig
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
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
	return cfg
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
	topo := field.NewPath("topology")
	switch cfg.Topology.Type {
	case Standalone:
		if cfg.Topology.Hosted != nil {
			errs = append(errs, field.Forbidden(topo.Child("hosted"), "only for type Hosted"))
		}
	case Hosted:
		h := cfg.Topology.Hosted
		if h == nil {
			errs = append(errs, field.Required(topo.Child("hosted"), "type Hosted needs the HCP namespace and HostedControlPlane name"))
			break
		}
		errs = append(errs, dnsLabel(topo.Child("hosted", "namespace"), h.Namespace)...)
		errs = append(errs, dnsSubdomain(topo.Child("hosted", "hostedControlPlane"), h.HostedControlPlane)...)
	default:
		errs = append(errs, field.NotSupported(topo.Child("type"), cfg.Topology.Type, []TopologyType{Standalone, Hosted}))
	}
	return errs
}

func dnsLabel(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func dnsSubdomain(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}
