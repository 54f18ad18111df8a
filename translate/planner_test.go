package translate_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hack/bench/synth"
	"github.com/topolayer/topolayer/translate"
)

// TestPlannerStreams: a planner fed one mutation at a time, in any order, with a settled
// function, makes the plan Engine.Plan makes (plan.json is the same), settles every entry
// exactly once, and settles early what no later stage reads.
func TestPlannerStreams(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		wantEarly    bool
	}{
		{"standalone", standaloneConfig, true},
		{"hosted", hostedConfig, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			engine := syntheticEngine(t, tc.config)
			dir := filepath.Join(t.TempDir(), "out")
			if err := synth.Write(dir, 500); err != nil {
				t.Fatal(err)
			}
			out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(engine.Plan(out))
			if err != nil {
				t.Fatal(err)
			}

			// The reader's order, not sorted, shuffled further.
			var streamed []*contract.Mutation
			if _, err := contract.WalkOutputDir(context.Background(), dir, contract.ReadOptions{}, func(m *contract.Mutation) error {
				streamed = append(streamed, m)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(streamed), func(i, j int) { streamed[i], streamed[j] = streamed[j], streamed[i] })
			settled := map[string]int{}
			early := 0
			adding := true
			p := engine.Planner(func(e *translate.Entry) error {
				settled[e.SourcePath+" "+e.Source.String()+" "+string(e.Action)+" "+e.Target.Cluster+" "+e.Rule]++
				if adding {
					early++
				}
				return nil
			})
			for _, m := range streamed {
				p.Add(m)
			}
			adding = false
			plan := p.Plan()
			if err := p.Err(); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(plan)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("the streamed plan differs from Engine.Plan's:\n got %.600s\nwant %.600s", got, want)
			}
			for k, n := range settled {
				if n != 1 {
					t.Errorf("%s settled %d times", k, n)
				}
			}
			if len(settled) != len(plan.Entries) {
				t.Errorf("%d entries settled, the plan has %d", len(settled), len(plan.Entries))
			}
			if early > 0 != tc.wantEarly {
				t.Errorf("%d entries settled while adding; want some: %v", early, tc.wantEarly)
			}
		})
	}
}
