package runner

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// validOutputs is the valid output directory of contracttest, built in memory.
func validOutputs() *contract.OutputDir {
	return &contract.OutputDir{
		HasControllerResults: true,
		ControllerResults: &contract.ControllerResults{ControllerResults: []contract.ControllerResult{
			{ControllerName: "sample-Controller", Status: contract.ControllerSucceeded},
		}},
		Mutations: contracttest.ValidMutations(),
	}
}

// validOutputBytes is what the bodies and options of validOutputs take on disk.
func validOutputBytes() int64 {
	var n int64
	for _, m := range contracttest.ValidMutations() {
		n += int64(len(m.Body) + len(m.Options))
	}
	return n
}

// returns is an operator that returns out and err.
func returns(out *contract.OutputDir, err error) ObjectsFunc {
	return func(context.Context, ObjectsRequest) (*contract.OutputDir, error) { return out, err }
}

func TestInMemoryRunObjects(t *testing.T) {
	errBroken := errors.New("broken")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // lets the abandoned function below end
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "ns"}}}
	inputs := []*contract.InputObject{{Resource: "configmaps", Namespace: "ns", Object: cm}}
	tests := []struct {
		name      string
		fn        ObjectsFunc
		limits    Limits
		wantOut   bool // outputs are returned
		wantCode  int
		wantBytes int64
		check     func(t *testing.T, err error)
	}{
		{
			name: "success", fn: returns(validOutputs(), nil), limits: Limits{Timeout: time.Minute, OutputSize: validOutputBytes()},
			wantOut: true, wantBytes: validOutputBytes(),
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatalf("RunObjects: %v", err)
				}
			},
		},
		{
			name: "the function sees the request",
			fn: func(_ context.Context, req ObjectsRequest) (*contract.OutputDir, error) {
				if req.Operator != "test-operator" || len(req.Inputs) != 1 || req.Inputs[0].Object != cm || !cmp.Equal(req.Controllers, []string{"x"}) {
					return nil, errors.New("unexpected request")
				}
				return validOutputs(), nil
			},
			wantOut: true, wantBytes: validOutputBytes(),
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatalf("RunObjects: %v", err)
				}
			},
		},
		{
			name: "error with outputs: a crash with exit code 1, outputs kept", fn: returns(validOutputs(), errBroken),
			wantOut: true, wantCode: 1, wantBytes: validOutputBytes(),
			check: func(t *testing.T, err error) {
				var ce *CrashError
				if !errors.As(err, &ce) || ce.ExitCode != 1 || ce.Operator != "test-operator" || ce.Command != cmdApplyConfiguration || !errors.Is(err, errBroken) {
					t.Fatalf("RunObjects error = %#v, want a CrashError with exit code 1 wrapping the function's", err)
				}
			},
		},
		{
			name: "error without outputs", fn: returns(nil, errBroken), wantCode: 1,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, errBroken) || !strings.Contains(err.Error(), `operator "test-operator"`) {
					t.Fatalf("RunObjects error = %v, want the function's, naming the operator", err)
				}
			},
		},
		{
			name: "no outputs and no error",
			fn:   returns(nil, nil),
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "no outputs") {
					t.Fatalf("RunObjects error = %v, want one saying there are no outputs", err)
				}
			},
		},
		{
			name: "panic", wantCode: 1,
			fn: func(context.Context, ObjectsRequest) (*contract.OutputDir, error) { panic("nil map in the operator") },
			check: func(t *testing.T, err error) {
				var pe *PanicError
				if !errors.As(err, &pe) || pe.Operator != "test-operator" || pe.Value != "nil map in the operator" || !strings.Contains(pe.Stack, "TestInMemoryRunObjects") {
					t.Fatalf("RunObjects error = %#v, want a PanicError with the stack", err)
				}
			},
		},
		{
			name: "timeout ignored: the function is abandoned", limits: Limits{Timeout: 50 * time.Millisecond}, wantCode: 1,
			fn: func(context.Context, ObjectsRequest) (*contract.OutputDir, error) {
				<-release
				return validOutputs(), nil
			},
			check: func(t *testing.T, err error) {
				var te *TimeoutError
				if !errors.As(err, &te) || !te.Abandoned || te.Timeout != 50*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("RunObjects error = %#v, want an abandoned TimeoutError", err)
				}
			},
		},
		{
			name: "timeout honoured", limits: Limits{Timeout: 50 * time.Millisecond}, wantCode: 1,
			fn: func(ctx context.Context, _ ObjectsRequest) (*contract.OutputDir, error) {
				<-ctx.Done()
				return validOutputs(), ctx.Err()
			},
			check: func(t *testing.T, err error) {
				var te *TimeoutError
				if !errors.As(err, &te) || te.Abandoned || te.Timeout != 50*time.Millisecond {
					t.Fatalf("RunObjects error = %#v, want a TimeoutError, not abandoned", err)
				}
			},
		},
		{
			name: "outputs too large", fn: returns(validOutputs(), nil), limits: Limits{OutputSize: validOutputBytes() - 1},
			wantBytes: validOutputBytes(),
			check: func(t *testing.T, err error) {
				var tl *OutputTooLargeError
				if !errors.As(err, &tl) || tl.Size != validOutputBytes() || tl.Limit != validOutputBytes()-1 || tl.Operator != "test-operator" {
					t.Fatalf("RunObjects error = %#v, want an OutputTooLargeError", err)
				}
			},
		},
		{
			name: "hostile outputs: a body named unlike its metadata",
			fn: func(context.Context, ObjectsRequest) (*contract.OutputDir, error) {
				out := validOutputs()
				out.Mutations[1].Metadata.Name = "not-settings" // the ConfigMap "settings"
				return out, nil
			},
			wantBytes: validOutputBytes(),
			check: func(t *testing.T, err error) {
				var fe *contract.FileError
				if !errors.As(err, &fe) || !errors.Is(err, contract.ErrMalformed) || !strings.Contains(err.Error(), `operator "test-operator": outputs:`) || !strings.Contains(fe.File, "not-settings") {
					t.Fatalf("RunObjects error = %v, want a malformed output naming the operator and the file", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &InMemory{Name: "ignored", Func: tt.fn, Limits: tt.limits}
			out, res, err := r.RunObjects(context.Background(), ObjectsRequest{Operator: "test-operator", Inputs: inputs, Controllers: []string{"x"}})
			tt.check(t, err)
			if res == nil {
				t.Fatal("no Result")
			}
			if res.Operator != "test-operator" || res.Sandbox != "in-process" || res.ExitCode != tt.wantCode || res.OutputBytes != tt.wantBytes {
				t.Errorf("Result = %+v, want exit code %d and %d output bytes", res, tt.wantCode, tt.wantBytes)
			}
			if !tt.wantOut {
				if out != nil {
					t.Errorf("outputs returned beside %v", err)
				}
				return
			}
			if out == nil || len(out.Mutations) != len(contracttest.ValidMutations()) {
				t.Fatalf("outputs = %v, want the %d mutations", out, len(contracttest.ValidMutations()))
			}
			for _, m := range out.Mutations {
				if !strings.HasPrefix(m.Path, string(m.Class)+"/") || (m.Metadata.Action.CarriesObject() && m.Object == nil) {
					t.Errorf("%s: not checked (Path %q, Object %v)", m.Identity(), m.Path, m.Object)
				}
			}
		})
	}
}

func TestInMemoryRunObjectsNoFunc(t *testing.T) {
	out, res, err := (&InMemory{Name: "op"}).RunObjects(context.Background(), ObjectsRequest{})
	if err == nil || !strings.Contains(err.Error(), `operator "op": no function`) || out != nil || res != nil {
		t.Fatalf("RunObjects without a function = %v, %v, %v", out, res, err)
	}
}

// TestInMemoryRun runs the directory form: the function sees the objects of the input
// directory, and its outputs, also those of a failed run, are written as an output directory
// that the reader reads.
func TestInMemoryRun(t *testing.T) {
	errBroken := errors.New("broken")
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings", "namespace": "ns"}, "data": map[string]any{"k": "v"}}}
	inputs := []*contract.InputObject{{Resource: "configmaps", Namespace: "ns", Object: cm}}
	for _, tc := range []struct {
		name     string
		fnErr    error
		wantCode int
	}{
		{name: "success"},
		{name: "failed with outputs", fnErr: errBroken, wantCode: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inDir := filepath.Join(t.TempDir(), "in")
			if err := contract.WriteInputDir(inDir, inputs); err != nil {
				t.Fatal(err)
			}
			var seen []*contract.InputObject
			r := &InMemory{Name: "op", Func: func(_ context.Context, req ObjectsRequest) (*contract.OutputDir, error) {
				seen = req.Inputs
				return validOutputs(), tc.fnErr
			}}
			outDir := filepath.Join(t.TempDir(), "out")
			res, err := r.Run(context.Background(), Request{InputDir: inDir, OutputDir: outDir})
			var ce *CrashError
			switch {
			case tc.fnErr == nil && err != nil:
				t.Fatalf("Run: %v", err)
			case tc.fnErr != nil && (!errors.As(err, &ce) || !errors.Is(err, tc.fnErr)):
				t.Fatalf("Run error = %v, want a CrashError wrapping the function's", err)
			}
			if res == nil || res.ExitCode != tc.wantCode || res.OutputBytes != validOutputBytes() {
				t.Errorf("Result = %+v", res)
			}
			if len(seen) != 1 || seen[0].File != "namespaces/ns/core/configmaps.yaml" || !cmp.Equal(seen[0].Object.Object, cm.Object) {
				t.Errorf("the function saw %v, want the ConfigMap of the input directory", seen)
			}
			read, err := contract.ReadOutputDir(outDir, contract.ReadOptions{})
			if err != nil {
				t.Fatalf("read the output dir: %v", err)
			}
			want := validOutputs()
			if err := contract.CheckOutputDir(want, contract.ReadOptions{}); err != nil {
				t.Fatal(err)
			}
			if len(read.Mutations) != len(want.Mutations) || !read.HasControllerResults {
				t.Fatalf("read %d mutations (controller results: %v), want %d", len(read.Mutations), read.HasControllerResults, len(want.Mutations))
			}
			for i, m := range read.Mutations {
				if m.Path != want.Mutations[i].Path || !cmp.Equal(m.Object, want.Mutations[i].Object) {
					t.Errorf("mutation %d: read %s, want %s", i, m.Path, want.Mutations[i].Path)
				}
			}
		})
	}
}
