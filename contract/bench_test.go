package contract_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/corpus"
)

// BenchmarkReadOutputDir reads the largest corpus case (75 mutations with their metadata),
// checking every body against its metadata and folder.
func BenchmarkReadOutputDir(b *testing.B) {
	dir := corpus.Path(b, corpus.CAO, "test-data/apply-configuration/overall/minimal-cluster/expected-output")
	b.ReportAllocs()
	var n int
	for b.Loop() {
		out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n = len(out.Mutations)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "mutations/s")
}

// BenchmarkParseMetadata decodes one metadata file.
func BenchmarkParseMetadata(b *testing.B) {
	data := []byte("action: Create\ncontrollerInstanceName: c\ngenerateName: \"\"\nname: settings\nnamespace: openshift-sample\nresourceType:\n  Group: \"\"\n  Resource: configmaps\n  Version: v1\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := contract.ParseMetadata(data); err != nil {
			b.Fatal(err)
		}
	}
}
