package translate_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest/synth"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// TestWritePlanJSON checks that the streaming writer writes what json.MarshalIndent writes.
func TestWritePlanJSON(t *testing.T) {
	hosted := syntheticEngine(t, hostedConfig)
	out := synth.Output(300)
	for _, tc := range []struct {
		name string
		plan *plans.Plan
	}{
		{"nil entries", &plans.Plan{Topology: plans.TopologyStandalone}},
		{"no entries", &plans.Plan{Topology: plans.TopologyStandalone, Entries: []plans.Entry{}}},
		{"standalone", translate.Standalone("synthetic", nil).Plan(out)},
		{"hosted, with guest identities", hosted.Plan(out)},
		{"one entry", &plans.Plan{Topology: plans.TopologyHosted, Entries: []plans.Entry{{Operator: "o", Class: contract.ClassManagement, Transforms: []string{}, Warnings: []string{"w"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.MarshalIndent(tc.plan, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := plans.WriteJSON(&got, tc.plan); err != nil {
				t.Fatal(err)
			}
			if w := string(want) + "\n"; got.String() != w {
				t.Errorf("WritePlanJSON differs from json.MarshalIndent:\n got %.400q\nwant %.400q", got.String(), w)
			}
		})
	}
}
