package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// writeFile is an operator that writes n bytes into its output directory.
func writeFile(n int) Func {
	return func(_ context.Context, req Request) error {
		return os.WriteFile(filepath.Join(req.OutputDir, contract.ControllerResultsFile), make([]byte, n), 0o644)
	}
}

func TestInProcessRun(t *testing.T) {
	errBroken := errors.New("broken")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // lets the abandoned function below end
	tests := []struct {
		name      string
		fn        Func
		limits    Limits
		wantBytes int64
		wantCode  int
		check     func(t *testing.T, err error, req Request)
	}{
		{
			name: "success", fn: writeFile(10), limits: Limits{Timeout: time.Minute, OutputSize: 10}, wantBytes: 10,
			check: func(t *testing.T, err error, _ Request) {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			},
		},
		{
			name: "the function sees absolute dirs and the request", limits: Limits{},
			fn: func(_ context.Context, req Request) error {
				if !filepath.IsAbs(req.InputDir) || !filepath.IsAbs(req.OutputDir) || req.Operator != "test-operator" || len(req.Controllers) != 1 {
					return errors.New("unexpected request")
				}
				if _, err := os.Stat(req.OutputDir); err != nil {
					return err
				}
				return nil
			},
			check: func(t *testing.T, err error, _ Request) {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			},
		},
		{
			name: "error", wantCode: 1,
			fn: func(context.Context, Request) error { return errBroken },
			check: func(t *testing.T, err error, _ Request) {
				if !errors.Is(err, errBroken) || err.Error() != `operator "test-operator": apply-configuration: broken` {
					t.Fatalf("Run error = %v", err)
				}
			},
		},
		{
			name: "panic", wantCode: 1,
			fn: func(context.Context, Request) error { panic("index out of range in the operator") },
			check: func(t *testing.T, err error, _ Request) {
				var pe *PanicError
				if !errors.As(err, &pe) || pe.Operator != "test-operator" || pe.Value != "index out of range in the operator" {
					t.Fatalf("Run error = %#v, want a PanicError", err)
				}
				if !strings.Contains(pe.Stack, "TestInProcessRun") || err.Error() != `operator "test-operator": panic: index out of range in the operator` {
					t.Errorf("PanicError: %q, stack:\n%s", err, pe.Stack)
				}
			},
		},
		{
			name: "panic with an error", wantCode: 1,
			fn: func(context.Context, Request) error { panic(errBroken) },
			check: func(t *testing.T, err error, _ Request) {
				var pe *PanicError
				if !errors.As(err, &pe) || !errors.Is(err, errBroken) {
					t.Fatalf("Run error = %#v, want a PanicError wrapping the value", err)
				}
			},
		},
		{
			name: "timeout honoured", limits: Limits{Timeout: 50 * time.Millisecond}, wantCode: 1,
			fn: func(ctx context.Context, _ Request) error {
				<-ctx.Done()
				return ctx.Err()
			},
			check: func(t *testing.T, err error, _ Request) {
				var te *TimeoutError
				if !errors.As(err, &te) || te.Abandoned || te.Killed || te.Timeout != 50*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Run error = %#v, want a TimeoutError", err)
				}
			},
		},
		{
			name: "timeout ignored: the function is abandoned", limits: Limits{Timeout: 50 * time.Millisecond}, wantCode: 1,
			fn: func(context.Context, Request) error {
				<-release
				return nil
			},
			check: func(t *testing.T, err error, _ Request) {
				var te *TimeoutError
				if !errors.As(err, &te) || !te.Abandoned {
					t.Fatalf("Run error = %#v, want an abandoned TimeoutError", err)
				}
				if !strings.Contains(err.Error(), "may still be running") {
					t.Errorf("error %q does not say the function may still run", err)
				}
			},
		},
		{
			name: "output too large", fn: writeFile(11), limits: Limits{OutputSize: 10}, wantCode: 0,
			check: func(t *testing.T, err error, req Request) {
				var tl *OutputTooLargeError
				if !errors.As(err, &tl) || tl.Size != 11 || tl.Limit != 10 || tl.Operator != "test-operator" {
					t.Fatalf("Run error = %#v, want an OutputTooLargeError", err)
				}
				if _, err := os.Stat(req.OutputDir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("output dir not removed: %v", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &InProcess{Name: "ignored", Func: tt.fn, Limits: tt.limits}
			req := Request{Operator: "test-operator", InputDir: t.TempDir(), OutputDir: filepath.Join(t.TempDir(), "out"), Controllers: []string{"x"}}
			res, err := r.Run(context.Background(), req)
			tt.check(t, err, req)
			if res == nil {
				t.Fatal("no Result")
			}
			if res.Operator != "test-operator" || res.Sandbox != "in-process" || res.ExitCode != tt.wantCode || res.OutputBytes != tt.wantBytes {
				t.Errorf("Result = %+v", res)
			}
		})
	}
}

// TestInProcessPanicIsolated runs a panicking operator and a good one side by side: the
// panic is reported and the other runner, and the panicking one again, still work.
func TestInProcessPanicIsolated(t *testing.T) {
	bad := &InProcess{Name: "bad", Func: func(context.Context, Request) error { panic("boom") }}
	good := &InProcess{Name: "good", Func: writeFile(1)}
	run := func(r Runner) error {
		_, err := r.Run(context.Background(), Request{InputDir: t.TempDir(), OutputDir: filepath.Join(t.TempDir(), "out")})
		return err
	}
	errs := make(chan error, 4)
	for _, r := range []Runner{bad, good, bad, good} {
		go func() { errs <- run(r) }()
	}
	var panics, ok int
	for range 4 {
		err := <-errs
		var pe *PanicError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &pe) && pe.Operator == "bad":
			panics++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if panics != 2 || ok != 2 {
		t.Errorf("%d panics and %d successes, want 2 and 2", panics, ok)
	}
}

func TestInProcessCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &InProcess{Name: "op", Func: func(ctx context.Context, _ Request) error { return ctx.Err() }, Limits: Limits{Timeout: time.Minute}}
	_, err := r.Run(ctx, Request{InputDir: t.TempDir(), OutputDir: filepath.Join(t.TempDir(), "out")})
	var te *TimeoutError
	if !errors.Is(err, context.Canceled) || errors.As(err, &te) {
		t.Fatalf("Run error = %v, want context.Canceled and no TimeoutError", err)
	}
}

func TestInProcessResources(t *testing.T) {
	in := &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{ExactResources: []contract.ExactResourceID{{
		ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: "ns", Name: "cm",
	}}}}
	out := contracttest.ValidOutputResources()
	tests := []struct {
		name    string
		r       *InProcess
		wantIn  *contract.InputResources
		wantOut *contract.OutputResources
	}{
		{"declared", &InProcess{Inputs: in, Outputs: out}, in, out},
		{"nothing declared", &InProcess{}, &contract.InputResources{}, &contract.OutputResources{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotIn, gotOut, err := tt.r.Resources(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantIn, gotIn); diff != "" {
				t.Errorf("inputs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOut, gotOut); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInProcessRejectsRequest(t *testing.T) {
	tests := []struct {
		name string
		r    *InProcess
		req  Request
		want string
	}{
		{"no function", &InProcess{Name: "op"}, Request{InputDir: t.TempDir(), OutputDir: filepath.Join(t.TempDir(), "out")}, `operator "op": no function`},
		{"no output dir", &InProcess{Name: "op", Func: writeFile(1)}, Request{InputDir: t.TempDir()}, `operator "op": output dir is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.r.Run(context.Background(), tt.req)
			if err == nil || err.Error() != tt.want || res != nil {
				t.Fatalf("Run = %v, %v; want error %q", res, err, tt.want)
			}
		})
	}
}
