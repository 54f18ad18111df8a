package translate_test

import (
	"runtime"
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest/synth"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
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

// BenchmarkPlanHostedHeld plans 10,000 mutations of the GuestIdentities mix on the hosted
// topology as `topolayer translate` does (a Planner with a settled function) and reports the
// heap the planner holds beyond the parsed directory when it settles its first entry, per
// mutation (held-B/mutation): every mutation placed and the plan-wide stages run, as the
// rewrite of the whole plan begins; from then on each entry goes as the rewrite finishes it
// (the process's peak is bench's peak RSS of `topolayer translate`).
func BenchmarkPlanHostedHeld(b *testing.B) {
	const n = 10000
	engine := syntheticEngine(b, hostedConfig)
	var held uint64
	for b.Loop() {
		// The planner drops what it settles: each run plans a directory of its own.
		b.StopTimer()
		out := synth.GuestIdentities().Output(n)
		if err := contract.ParseObjects(out, nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		first := true
		p := engine.Planner(func(*plans.Entry) error {
			if first {
				first = false
				runtime.GC()
				var now runtime.MemStats
				runtime.ReadMemStats(&now)
				held = max(held, now.HeapAlloc-min(now.HeapAlloc, before.HeapAlloc))
			}
			return nil
		})
		for i := range out.Mutations {
			p.Add(&out.Mutations[i])
		}
		p.AddControllerResults(out.ControllerResults)
		if pl := p.Plan(); pl.Summary.Rejected > 0 {
			b.Fatalf("%d rejected", pl.Summary.Rejected)
		}
	}
	b.ReportMetric(float64(held)/n, "held-B/mutation")
}
