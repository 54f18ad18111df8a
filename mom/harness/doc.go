// Package harness runs an operator's declarative apply-configuration tests, the format of
// the multi-operator-manager contract's test harness (`multi-operator-manager test
// apply-configuration`): every directory that holds a test.yaml is a test, with an
// input-dir and an expected-output.
//
// For each test (Run, RunTest), the operator runs as
//
//	<binaryName or Options.Command> apply-configuration --input-dir <test>/input-dir --output-dir <actual> [--now ...] [--controllers ...]
//
// through a Runner (Exec by default: a child process with PATH only, under a 5 s timeout;
// CommandRunner runs an operator built with sdk in process; a sandboxed runner can
// take their place). Its stdout and stderr are kept next to the actual output as stdout.log
// and stderr.log. The exit status must match test.yaml's desiredError; a mismatch fails the
// test but the outputs are still compared, and an operator that could not run fails it
// without a comparison.
//
// The comparison (Compare) is the upstream one:
//   - controller-results.yaml must be equal, entries in order;
//   - per class (Configuration, Management, UserWorkload), ignoring events, the recorded
//     requests must be the same set: equal action, patch type, field manager, controller
//     instance name, group, version, resource, namespace, name, generate name, and body and
//     options byte for byte. File names, prefixes, order and duplicates do not matter, and a
//     missing class folder equals an empty one;
//   - a write under Unspecified (undeclared) fails the test on either side, as the upstream
//     reader rejects the folder.
//
// Differences are reported per object, with a unified diff of what changed. With
// Options.Update, expected-output is rewritten from the operator's output instead.
//
// A test directory:
//
//	tests/defaults/
//	  test.yaml          # binaryName, testName, description, testType: ApplyConfiguration, now, controllers, desiredError
//	  input-dir/         # must-gather-like
//	  expected-output/   # Management/..., UserWorkload/..., controller-results.yaml
package harness
