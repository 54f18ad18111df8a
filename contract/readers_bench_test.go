package contract_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest/synth"
	"github.com/topolayer/topolayer/internal/corpus"
)

// BenchmarkReadOutputDirSynthetic reads 1,000 synthetic mutations shaped like the CAO corpus
// (package synth): 2,000+ files, every body checked against its metadata.
func BenchmarkReadOutputDirSynthetic(b *testing.B) {
	dir := b.TempDir() + "/out"
	if err := synth.Write(dir, 1000); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Mutations) != 1000 {
			b.Fatalf("%d mutations", len(out.Mutations))
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "mutations/s")
}

// BenchmarkWriteOutputDirSynthetic writes 1,000 synthetic mutations.
func BenchmarkWriteOutputDirSynthetic(b *testing.B) {
	out := synth.Output(1000)
	root := b.TempDir()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := contract.WriteOutputDir(root+"/"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676%26)), out, contract.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "mutations/s")
}

// BenchmarkReadInputDir reads the input directory of the CAO minimal-cluster case.
func BenchmarkReadInputDir(b *testing.B) {
	dir := corpus.Path(b, corpus.CAO, "test-data/apply-configuration/overall/minimal-cluster/input-dir")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := contract.ReadInputDir(dir, contract.ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
