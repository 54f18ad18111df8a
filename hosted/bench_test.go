package hosted_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/topology"
)

// BenchmarkHostedPlan translates the largest corpus case in memory (routing, names,
// references, annotations, the hypershift profile), the engine's hot path.
func BenchmarkHostedPlan(b *testing.B) {
	out, err := contract.ReadOutputDir(corpus.Path(b, corpus.CAO, "test-data/apply-configuration/overall/minimal-cluster/expected-output"), contract.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := loadConfigB()
	if err != nil {
		b.Fatal(err)
	}
	engine, err := topology.Engine(cfg, "cluster-authentication-operator", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if p := engine.Plan(out); p.Summary.Rejected != 0 {
			b.Fatal("rejected")
		}
	}
	b.ReportMetric(float64(len(out.Mutations))*float64(b.N)/b.Elapsed().Seconds(), "mutations/s")
}
