package translate_test

import (
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest/synth"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/topology"
)

// benchmarkPlan plans n synthetic mutations (shaped like the CAO corpus, see package synth)
// per iteration and reports mutations per second and allocations per mutation. The bodies
// are parsed once before the timer starts, as contract.ReadOutputDir parses them: the
// engine's cost is measured, not the parser's (hack/bench's parse floor measures that).
func benchmarkPlan(b *testing.B, engine translate.Engine, n int) {
	benchmarkPlanMix(b, engine, synth.CAO(), n)
}

// benchmarkPlanMix is benchmarkPlan over n mutations of mix.
func benchmarkPlanMix(b *testing.B, engine translate.Engine, mix synth.Mix, n int) {
	out := mix.Output(n)
	if err := contract.ParseObjects(out, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p := engine.Plan(out)
		if len(p.Entries) < n || p.Summary.Rejected > 0 {
			b.Fatalf("%d entries (%d rejected), want %d or more, none rejected", len(p.Entries), p.Summary.Rejected, n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "mutations/s")
}

// BenchmarkPlanStandalone is the standalone (identity) engine over 10,000 mutations.
func BenchmarkPlanStandalone(b *testing.B) {
	benchmarkPlan(b, translate.Standalone("synthetic", nil), 10000)
}

// BenchmarkPlanHosted is the hosted engine (simulated namespaces, references, annotations)
// over 1,000 mutations (its cost per mutation grows with the directory's size; the report
// of hack/bench compares 1,000 and 10,000).
func BenchmarkPlanHosted(b *testing.B) {
	benchmarkPlan(b, syntheticEngine(b, hostedConfig), 1000)
}

// BenchmarkPlanHostedLarge is BenchmarkPlanHosted over 10,000 mutations: make bench holds the
// engine to the same rate at both sizes.
func BenchmarkPlanHostedLarge(b *testing.B) {
	benchmarkPlan(b, syntheticEngine(b, hostedConfig), 10000)
}

// Configurations of the synthetic operator's tests and benchmarks.
const (
	standaloneConfig = "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Standalone\n"
	hostedConfig     = synth.HostedConfig
)

// syntheticEngine returns the engine of the topology of a configuration, for the operator
// "synthetic" of package synth.
func syntheticEngine(tb testing.TB, cfgYAML string) translate.Engine {
	tb.Helper()
	cfg, err := config.Parse([]byte(cfgYAML))
	if err != nil {
		tb.Fatal(err)
	}
	engine, err := topology.Engine(cfg, "synthetic", nil)
	if err != nil {
		tb.Fatal(err)
	}
	return engine
}

// BenchmarkPlanHostedGuestIdentities is the hosted engine over 10,000 mutations of the
// GuestIdentities mix: every Deployment acts as a service account of its own, with its
// RBAC, and events name the Deployments.
func BenchmarkPlanHostedGuestIdentities(b *testing.B) {
	benchmarkPlanMix(b, syntheticEngine(b, hostedConfig), synth.GuestIdentities(), 10000)
}
