package configtest

import (
	"slices"
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
)

// MergeFragment returns a copy of cfg with fragment merged into it, as a person would paste
// it: each operator's supplements added to its own, each policy entry's privileged objects
// to its own (a policy entry it does not have yet is added). cfg is not changed. A fragment
// naming an operator cfg does not run fails tb.
func MergeFragment(tb testing.TB, cfg *config.TopologyConfig, fragment config.TopologyConfig) *config.TopologyConfig {
	tb.Helper()
	merged := *cfg
	merged.Operators = slices.Clone(cfg.Operators)
	merged.Policy.Operators = slices.Clone(cfg.Policy.Operators)
	for _, op := range fragment.Operators {
		i := slices.IndexFunc(merged.Operators, func(o config.Operator) bool { return o.Name == op.Name })
		if i < 0 {
			tb.Fatalf("the snippet names operator %q, which the configuration does not run", op.Name)
		}
		s := &merged.Operators[i].Supplements
		s.Outputs = contract.MergeOutputResources(s.Outputs, op.Supplements.Outputs)
	}
	for _, p := range fragment.Policy.Operators {
		i := slices.IndexFunc(merged.Policy.Operators, func(o config.OperatorPolicy) bool { return o.Name == p.Name })
		if i < 0 {
			merged.Policy.Operators = append(merged.Policy.Operators, config.OperatorPolicy{Name: p.Name})
			i = len(merged.Policy.Operators) - 1
		}
		merged.Policy.Operators[i].Privileged = append(slices.Clone(merged.Policy.Operators[i].Privileged), p.Privileged...)
	}
	return &merged
}
