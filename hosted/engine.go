package hosted

import (
	"errors"
	"fmt"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/translate"
)

// Engine returns the translation engine of a hosted configuration: the built-in hosted
// routing rules and the configured ones, simulated namespaces in the HCP namespace with the
// configured aliases, the configured transform profiles and patches, and the standalone
// identity recorded on every object. operator names the operator; it labels every object.
func Engine(cfg *config.TopologyConfig, operator string, declared *contract.OutputResources) (translate.Engine, error) {
	if cfg.Topology.Type != config.Hosted || cfg.Topology.Hosted == nil {
		return translate.Engine{}, fmt.Errorf("topology %s is not %s", cfg.Topology.Type, config.Hosted)
	}
	if operator == "" {
		return translate.Engine{}, errors.New("a hosted plan needs the operator's name: it labels every object written")
	}
	h := cfg.Topology.Hosted
	names := namespaces.Hosted{Namespace: h.Namespace}
	for _, a := range cfg.Namespaces.Aliases {
		names.Aliases = append(names.Aliases, namespaces.Alias{
			Source: contract.Identity{Group: a.Group, Resource: a.Resource, Namespace: a.Namespace, Name: a.Name},
			Name:   a.HostedName,
		})
	}
	if err := names.Validate(); err != nil {
		return translate.Engine{}, fmt.Errorf("namespaces: %w", err)
	}
	transforms, err := cfg.CompileTransforms()
	if err != nil {
		return translate.Engine{}, err
	}
	return translate.Engine{
		Topology:           translate.TopologyHosted,
		Operator:           operator,
		Router:             cfg.RoutingTable(),
		Names:              names,
		Declared:           declared,
		Transforms:         transforms,
		HCPNamespace:       h.Namespace,
		HostedControlPlane: h.HostedControlPlane,
		Annotate:           true,
		Policy:             cfg.PolicyFor(operator),
	}, nil
}
