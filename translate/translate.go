package translate

import (
	"fmt"

	"github.com/topolayer/topolayer/mom/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Rule names of the checks the engine makes before routing.
const (
	// RuleDeclaredOutputs rejects mutations the operator did not declare for their class.
	RuleDeclaredOutputs = "declared-outputs"
	// RuleUnspecified rejects mutations the operator itself could not place in a class.
	RuleUnspecified = "unspecified-class"
	// RuleNameMapping rejects mutations whose identity cannot be mapped to the target.
	RuleNameMapping = "name-mapping"
)

// Engine turns an operator's output directory into a plan. Its fields are its configuration;
// Plan is pure: no I/O, no clock, the same plan for the same input.
type Engine struct {
	// Topology is TopologyStandalone or TopologyHosted; it is copied into the plan.
	Topology string
	// Operator names the operator whose outputs are translated.
	Operator string
	// Router places each mutation.
	Router routing.Router
	// Names maps standalone identities to target identities.
	Names namespaces.Mapper
	// Declared is the operator's output-resources. When set, a mutation that its class's
	// declarations do not match is rejected. When nil, the class folders are trusted.
	Declared *contract.OutputResources
}

// Standalone returns the engine of the standalone topology: every mutation to the one
// cluster, identities unchanged.
func Standalone(operator string, declared *contract.OutputResources) Engine {
	return Engine{
		Topology: TopologyStandalone,
		Operator: operator,
		Router:   routing.Standalone(),
		Names:    namespaces.Identity{},
		Declared: declared,
	}
}

// Plan translates every mutation of out. Mutations that may not be written are rejected
// entries, not errors; check Plan.Rejected before applying.
func (e Engine) Plan(out *contract.OutputDir) *Plan {
	p := &Plan{Topology: e.Topology, Entries: make([]Entry, 0, len(out.Mutations))}
	for i := range out.Mutations {
		entry := e.entry(&out.Mutations[i])
		p.Summary.add(entry.Disposition)
		p.Entries = append(p.Entries, entry)
	}
	return p
}

func (e Engine) entry(m *contract.Mutation) Entry {
	src := m.Identity()
	entry := Entry{
		Operator:   e.Operator,
		Class:      m.Class,
		Action:     m.Metadata.Action,
		Source:     src,
		Transforms: []string{},
		Warnings:   []string{},
		SourcePath: m.Path,
	}
	reject := func(rule, reason string) Entry {
		entry.Disposition, entry.Rule, entry.Reason = routing.Rejected, rule, reason
		return entry
	}
	if m.Class == contract.ClassUnspecified {
		return reject(RuleUnspecified, "the operator wrote it under Unspecified: it matched no declared output resource")
	}
	if e.Declared != nil && !e.Declared.ForClass(m.Class).Matches(src) {
		return reject(RuleDeclaredOutputs, fmt.Sprintf("%s is not declared in the %s output-resources", src, m.Class))
	}
	d := e.Router.Route(m.Class, src)
	entry.Disposition, entry.Rule, entry.Reason = d.Disposition, d.Rule, d.Reason
	entry.Target.Cluster = d.Cluster
	if d.Disposition != routing.Apply && d.Disposition != routing.Absorbed {
		return entry
	}
	target, err := e.Names.ToTarget(d.Cluster, src)
	if err != nil {
		return reject(RuleNameMapping, err.Error())
	}
	entry.Target.Identity = target
	if d.Disposition == routing.Apply {
		tm := *m
		tm.Metadata.SetIdentity(target)
		tm.Path = ""
		entry.Mutation = &tm
	}
	return entry
}
