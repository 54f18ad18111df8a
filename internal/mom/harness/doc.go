// Package harness runs an operator's declarative apply-configuration tests, the format of
// the multi-operator-manager contract's test harness (`multi-operator-manager test
// apply-configuration`, at 90ec5f2), giving the verdicts that harness gives: every directory
// that holds a test.yaml is a test, with an input-dir and an expected-output.
//
// Run removes and recreates the output directory, then, for each test (RunTest), creates its
// actual output directory with empty stdout.log and stderr.log in it and runs the operator as
//
//	<binaryName or Options.Command> apply-configuration --input-dir <test>/input-dir --output-dir <actual> [--now ...] [--controllers ...]
//
// with --now in the local time zone, through a Runner (Exec by default: a child process with
// the harness's environment, killed after 5 s; CommandRunner runs an operator built with sdk
// in process). The exit status must match test.yaml's desiredError; a mismatch fails the test
// but the outputs are still compared; a kill at the timeout is a non-zero exit; an operator
// that could not run fails the test without a comparison. junit.xml is written into the
// output directory at the end.
//
// The comparison (Compare) is the upstream one, on the output directories as upstream's
// reader sees them:
//   - a directory that reader refuses fails the test: a top-level entry other than
//     Configuration, Management, UserWorkload, controller-results.yaml and the logs (such as
//     Unspecified, the undeclared writes), a body without its metadata file, a body that is
//     not an object with a kind;
//   - controller-results.yaml is parsed and must be deeply equal: order, and an absent
//     errors list versus an empty one, matter; an empty file is an absent one, unknown keys
//     are ignored;
//   - per class, ignoring events, the recorded requests must be the same set: equal action,
//     patch type, field manager, controller instance name, group, version, resource,
//     namespace, name (read from `mame:` only, as the library-go upstream vendors does),
//     generate name, kind (read only from YAML bodies that are not JSON), and body and
//     options byte for byte, an empty options file equal to none. File names, prefixes,
//     order, duplicates, unknown metadata keys, orphan metadata, files that are not bodies
//     (.gitkeep, .json files without "yaml" in their name) and unknown action folders do
//     not matter.
//
// Where topolayer's own readers (those `topolayer run` uses) refuse what upstream accepts
// (unknown keys in test.yaml or metadata, stray files, an empty options file...), a passing
// test carries a warning saying so. Differences are reported per object, with a unified diff
// of what changed. With Options.Update (upstream's --replace-expected-output), the operator
// writes into expected-output instead, and nothing is compared; with Options.PreservePolicy
// ReplaceExpectedOutput alone, as upstream, it writes into the output directory as usual,
// and nothing is compared. docs/harness.md lists every known difference from upstream.
//
// A test directory:
//
//	tests/defaults/
//	  test.yaml          # binaryName, testName, description, testType: ApplyConfiguration, now, controllers, desiredError
//	  input-dir/         # must-gather-like
//	  expected-output/   # Management/..., UserWorkload/..., controller-results.yaml
package harness
