package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// Run a Go function as an operator: it writes controller-results.yaml into its output
// directory. A second operator panics; the runner reports it and nothing else is affected.
func Example() {
	tmp, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(tmp)
	input := filepath.Join(tmp, "input")
	_ = os.Mkdir(input, 0o755)

	results := &contract.ControllerResults{ControllerResults: []contract.ControllerResult{
		{ControllerName: "sample", Status: contract.ControllerSucceeded},
	}}
	good := &runner.InProcess{
		Name: "sample-operator",
		Func: func(ctx context.Context, req runner.Request) error {
			data, err := contract.MarshalControllerResults(results)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(req.OutputDir, contract.ControllerResultsFile), data, 0o644)
		},
		Limits: runner.Limits{OutputSize: 1 << 20},
	}
	bad := &runner.InProcess{
		Name: "broken-operator",
		Func: func(context.Context, runner.Request) error { panic("nil map") },
	}

	for i, r := range []runner.Runner{good, bad} {
		res, err := r.Run(context.Background(), runner.Request{
			InputDir:  input,
			OutputDir: filepath.Join(tmp, fmt.Sprintf("output-%d", i)),
		})
		var panicked *runner.PanicError
		switch {
		case errors.As(err, &panicked):
			fmt.Println(panicked.Operator, "panicked:", panicked.Value)
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Println(res.Operator, "wrote", res.OutputBytes, "bytes", res.Sandbox)
		}
	}
	// Output:
	// sample-operator wrote 64 bytes in-process
	// broken-operator panicked: nil map
}
