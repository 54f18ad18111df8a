package translate_test

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest/synth"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// TestParallelPlan: the hosted engine rewrites and checks entries on every core; the plan is
// the one a single core makes, entry by entry and object by object, with a configured
// strategic-merge patch whose nodes the merge could otherwise share between objects. make
// test runs it under the race detector too.
func TestParallelPlan(t *testing.T) {
	cfg := hostedConfig + "transforms:\n  profiles: [hypershift]\n  patches:\n  - name: tier\n    match: {resource: deployments}\n    strategicMerge: 'spec: {template: {metadata: {labels: {tier: control-plane}}, spec: {tolerations: [{key: k, operator: Exists}]}}}'\n"
	engine := syntheticEngine(t, cfg)
	out := synth.Output(2000)
	if err := contract.ParseObjects(out, nil); err != nil {
		t.Fatal(err)
	}
	plan := func(procs int) (*plans.Plan, []byte) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		p := engine.Plan(out)
		var b bytes.Buffer
		if err := plans.WriteJSON(&b, p); err != nil {
			t.Fatal(err)
		}
		return p, b.Bytes()
	}
	seq, seqJSON := plan(1)
	par, parJSON := plan(4)
	if !bytes.Equal(seqJSON, parJSON) {
		t.Fatal("plan.json differs between one core and four")
	}
	patched := 0
	for i := range seq.Entries {
		s, p := seq.Entries[i].Object, par.Entries[i].Object
		if (s == nil) != (p == nil) || s != nil && !reflect.DeepEqual(s.Object, p.Object) {
			t.Fatalf("%s: the object differs between one core and four", seq.Entries[i].Source)
		}
		for _, c := range seq.Entries[i].Changes {
			if c.By == "tier" {
				patched++
				break
			}
		}
	}
	if patched == 0 {
		t.Fatal("the patch changed no object: the test proves nothing of it")
	}
}
