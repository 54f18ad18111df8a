package translate_test

import (
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/hack/bench/synth"
	"github.com/topolayer/topolayer/topology"
	"github.com/topolayer/topolayer/translate"
)

// benchmarkPlan plans n synthetic mutations (shaped like the CAO corpus, see package synth)
// per iteration and reports mutations per second and allocations per mutation.
func benchmarkPlan(b *testing.B, engine translate.Engine, n int) {
	out := synth.Output(n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p := engine.Plan(out)
		if len(p.Entries) != n {
			b.Fatalf("%d entries, want %d", len(p.Entries), n)
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
	cfg, err := config.Parse([]byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Hosted\n  hosted: {namespace: clusters-example, hostedControlPlane: example}\n"))
	if err != nil {
		b.Fatal(err)
	}
	engine, err := topology.Engine(cfg, "synthetic", nil)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkPlan(b, engine, 1000)
}
