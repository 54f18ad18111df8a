package determinism_test

import (
	"fmt"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/determinism"
)

// Three runs of an operator on the same inputs: its syncer failed in one of them.
func ExampleCompare() {
	run := func(syncer contract.ControllerStatus) determinism.Run {
		return determinism.Run{Output: &contract.OutputDir{ControllerResults: &contract.ControllerResults{
			ControllerResults: []contract.ControllerResult{
				{ControllerName: "observer", Status: contract.ControllerSucceeded},
				{ControllerName: "syncer", Status: syncer},
			},
		}}}
	}
	report := determinism.Compare([]determinism.Run{run(contract.ControllerSucceeded), run(contract.ControllerFailed), run(contract.ControllerSucceeded)})
	fmt.Println("checked:", report.Checked)
	for _, c := range report.Nondeterministic {
		fmt.Printf("%s differs in %d of %d runs: %s %s\n", c.Name, c.RunsDiffering, report.Runs, c.Objects[0].Object, c.Objects[0].Difference)
	}
	// Output:
	// checked: [observer syncer]
	// syncer differs in 1 of 3 runs: controller-results.yaml "Succeeded" in 2, "Failed" in 1 of 3 runs
}
