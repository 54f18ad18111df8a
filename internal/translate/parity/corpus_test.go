package parity_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/golden"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/parity"
	"github.com/topolayer/topolayer/internal/translate/scope"
)

// TestCorpusParity compares the standalone and the hosted placement of every CAO corpus
// case, with the example configurations: every difference must be attributed, and the
// changes that keep simulated namespaces whole (selectors scoped, annotation, payload and
// status references rewritten) must appear, attributed to their steps. The reports are
// golden files under testdata/corpus/.
func TestCorpusParity(t *testing.T) {
	// The steps of issue 16 that some CAO case must show (Cause.By).
	attributed := map[string]int{
		scope.Rule:                       0,
		translate.ByAnnotationReferences: 0,
		translate.ByPayloadServiceDNS:    0,
		translate.ByStatusReferences:     0,
	}
	found := 0
	for _, c := range corpus.CAOCases(t) {
		found++
		t.Run(filepath.Base(c.Name), func(t *testing.T) {
			report := compareDir(t, c.ExpectedOutput, c.OutputResources, "cluster-authentication-operator")
			if err := report.Err(); err != nil {
				t.Errorf("%v", err)
			}
			for _, o := range report.Objects {
				for _, d := range o.Differences {
					for _, cause := range d.Causes {
						if _, ok := attributed[cause.By]; ok {
							attributed[cause.By]++
						}
					}
				}
			}
			var md bytes.Buffer
			if err := report.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			golden.File(t, filepath.Join("testdata", "corpus", filepath.Base(c.Name)+".md"), md.Bytes(), "go test ./internal/translate/parity -update")
			t.Logf("parity: %s", report.Summary)
		})
	}
	if found == 0 {
		t.Fatal("no CAO corpus case")
	}
	for by, n := range attributed {
		if n == 0 {
			t.Errorf("no difference attributed to %s in the CAO corpus", by)
		} else {
			t.Logf("%d differences attributed to %s", n, by)
		}
	}
}

// compareDir builds the parity report of an output directory with the example configurations.
func compareDir(t *testing.T, dir, outputResources, operator string) *parity.Report {
	t.Helper()
	out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var declared *contract.OutputResources
	if outputResources != "" {
		declared = contracttest.ParseFile(t, outputResources, contract.ParseOutputResources)
	}
	scfg, err := config.Load(filepath.Join("..", "..", "..", "examples", "standalone.yaml"))
	se := engineOf(t, scfg, err, operator, declared)
	hcfg, err := config.Load(filepath.Join("..", "..", "..", "examples", "hosted.yaml"))
	he := engineOf(t, hcfg, err, operator, declared)
	report, err := parity.Compare(se.Plan(out), he.Plan(out), parity.OptionsFor(he))
	if err != nil {
		t.Fatal(err)
	}
	return report
}
