package translate_test

import (
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// hostedEngine is operator "op"'s engine on a hosted topology whose control plane is in
// namespace hcp: the default hosted routing (cluster RBAC converted), the hosted name mapping
// and the hosted stages around transforms. A test sets what else it needs (Policy,
// HCPNamespace, Containment, ...) on the copy it gets.
func hostedEngine(hcp string, transforms ...transform.Transform) translate.Engine {
	return translate.Engine{
		Topology: plans.TopologyHosted, Operator: "op",
		Router: &routing.Table{Rules: routing.HostedDefaults(routing.ConvertClusterRBAC)},
		Names:  namespaces.Hosted{Namespace: hcp}, Stages: translate.HostedStages(transforms...),
	}
}

// profileEngine is hostedEngine with the HyperShift profile's transforms, under policy.
func profileEngine(hcp string, policy *policy.Policy) translate.Engine {
	e := hostedEngine(hcp, hosted.HyperShiftProfile()...)
	e.Policy = policy
	return e
}

// standaloneEngine is operator "op"'s standalone engine with its declarations, under policy.
func standaloneEngine(declared *contract.OutputResources, policy *policy.Policy) translate.Engine {
	e := translate.Standalone("op", declared)
	e.Policy = policy
	return e
}
