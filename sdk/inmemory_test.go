package sdk_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/mom/harness"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/internal/samples/sample"
	"github.com/topolayer/topolayer/internal/samples/sampleaudit"
	"github.com/topolayer/topolayer/sdk"
)

// sampleTests holds the sample operators' tests, one folder per operator binary.
const sampleTests = "../examples/sample-operators/tests"

// binDir holds the sample operators' binaries, built once by TestMain for the equivalence
// test.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(contracttest.RunWithOperators(m, &binDir, "sdk-operators-", "../cmd/sample-operator", "../cmd/sample-audit-operator"))
}

// TestInMemoryEqualsExec runs every test of the sample operators twice, through the runners
// topolayer run uses: the operator's binary under runner.Exec (input directory written,
// output directory read), and the same operator linked in under runner.InMemory (objects in,
// objects out, nothing on disk). Both must make the same outputs: the same mutations with the
// same bytes, and the same controller results.
func TestInMemoryEqualsExec(t *testing.T) {
	operators := map[string]func() (*sdk.Operator, error){
		sample.Name:      func() (*sdk.Operator, error) { return sample.New("") },
		sampleaudit.Name: sampleaudit.New,
	}
	tests, err := harness.Discover(sampleTests, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) < 6 {
		t.Fatalf("%d sample tests found under %s, want the six of the two sample operators", len(tests), sampleTests)
	}
	compared := 0
	t.Cleanup(func() {
		if compared == 0 {
			t.Error("no test made a mutation: nothing was compared")
		}
	})
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			ctx := context.Background()
			desc := tc.Description
			newOp := operators[desc.BinaryName]
			if newOp == nil {
				t.Fatalf("no sample operator %q", desc.BinaryName)
			}
			op, err := newOp()
			if err != nil {
				t.Fatal(err)
			}
			exe := &runner.Exec{Command: []string{filepath.Join(binDir, desc.BinaryName)}}
			outDir := filepath.Join(t.TempDir(), "output")
			_, execErr := exe.Run(ctx, runner.Request{InputDir: tc.InputDir(), OutputDir: outDir, Now: desc.Now.Time, Controllers: desc.Controllers})
			fromExec, err := contract.ReadOutputDir(outDir, contract.ReadOptions{})
			if err != nil {
				t.Fatalf("exec: read the output dir: %v (run: %v)", err, execErr)
			}

			in, err := contract.ReadInputDir(tc.InputDir(), contract.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			mem := op.InMemory(runner.Limits{})
			fromMemory, res, memErr := mem.RunObjects(ctx, runner.ObjectsRequest{Inputs: in.Objects(), Discovery: in.Discovery, Now: desc.Now.Time, Controllers: desc.Controllers})
			if fromMemory == nil {
				t.Fatalf("in memory: no outputs: %v", memErr)
			}
			if res.Sandbox != "in-process" {
				t.Errorf("in memory: sandbox %q", res.Sandbox)
			}

			// Both fail, or neither; a failed run is an exit with code 1 either way.
			wantFail := desc.DesiredError != ""
			for name, err := range map[string]error{"exec": execErr, "in memory": memErr} {
				var crash *runner.CrashError
				if (err != nil) != wantFail || (err != nil && (!errors.As(err, &crash) || crash.ExitCode != 1)) {
					t.Errorf("%s: error %v, want a failure: %t (an exit with code 1)", name, err, wantFail)
				}
			}
			compared += len(fromExec.Mutations)
			if diff := cmp.Diff(summarize(t, fromExec), summarize(t, fromMemory)); diff != "" {
				t.Errorf("in memory differs from exec (-exec +in memory):\n%s", diff)
			}
		})
	}
}

// mutationSummary is what a mutation says, in a form two runners can be compared on.
type mutationSummary struct {
	Path     string
	Metadata contract.Metadata
	Body     string
	Options  string
}

// summarize lists the outputs as comparable values: every mutation with its file, metadata
// and bytes (a mutation read from disk carries its bytes; one made in memory the bytes the
// writer would write), and the controller results.
func summarize(t *testing.T, out *contract.OutputDir) any {
	t.Helper()
	var ms []mutationSummary
	for i := range out.Mutations {
		m := &out.Mutations[i]
		md := m.Metadata
		md.NameKey = "" // how the name key was spelled on disk, not what the operator said
		ms = append(ms, mutationSummary{Path: m.Path, Metadata: md, Body: string(contracttest.Bytes(t, m)), Options: string(m.Options)})
	}
	return struct {
		Mutations []mutationSummary
		Results   *contract.ControllerResults
	}{ms, out.ControllerResults}
}
