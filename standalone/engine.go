package standalone

import (
	"fmt"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/translate"
)

// Engine returns the translation engine of a standalone configuration: the identity placement
// (every class to the one cluster, names unchanged), plus whatever rules and patches the
// configuration adds.
func Engine(cfg *config.TopologyConfig, operator string, declared *contract.OutputResources) (translate.Engine, error) {
	if cfg.Topology.Type != config.Standalone {
		return translate.Engine{}, fmt.Errorf("topology %s is not %s", cfg.Topology.Type, config.Standalone)
	}
	transforms, err := cfg.CompileTransforms()
	if err != nil {
		return translate.Engine{}, err
	}
	return translate.Engine{
		Topology:   translate.TopologyStandalone,
		Operator:   operator,
		Router:     cfg.RoutingTable(),
		Names:      namespaces.Identity{},
		Declared:   declared,
		Transforms: transforms,
		Policy:     cfg.PolicyFor(operator),
	}, nil
}
