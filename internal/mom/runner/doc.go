// Package runner runs one MOM contract operator once, offline, behind one interface.
//
// A Runner answers two questions: what does the operator read and what may it write
// (Resources, from the contract's input-resources and output-resources commands), and what
// would it write now (Run, the contract's apply-configuration: an input dir in, an output dir
// out). Three implementations exist:
//
//   - Exec runs a contract binary in a sandbox: a clean environment (PATH, a temporary
//     HOME, the configured Env and the run's Request.Env, read from the operator's inputs;
//     nothing inherited: no KUBECONFIG, no in-cluster service variables, no proxy
//     credentials), no network (a new user and network namespace
//     where the system allows it, otherwise proxy variables pointing at an address that
//     refuses, which Result.Sandbox and the log say) but the endpoints of Exec.Egress (the
//     sandbox's init, RunInit, routes them to its loopback interface and hands its listeners
//     to the runner, which connects each connection only to an allowed address and port),
//     its own process group that is killed as
//     a whole at the timeout and after the operator exits, a limit on its virtual address
//     space, and a watched output size.
//   - InProcess runs a Go function with the same request: panics are recovered, the timeout
//     is a context deadline, the output size is checked afterwards.
//   - InMemory runs an operator built with the operator SDK (sdk.Operator.InMemory) over
//     objects in memory: it is also an ObjectRunner, whose RunObjects takes the objects the
//     input directory would hold and returns the output directory, checked as a reader
//     checks one on disk (contract.CheckOutputDir), with no fork, no exec and no directory.
//     It is contained as InProcess is; a function that fails returns a *CrashError with
//     exit code 1 and its outputs, as an exec'd operator that exits 1 does.
//
// NetworkNeeds reads an operator's output for what it failed to reach from its sandbox, so
// that a status can name the missing egress.
//
// Failures that callers branch on are typed: *TimeoutError, *CrashError, *PanicError and
// *OutputTooLargeError, each naming the operator; match them with errors.As.
//
// What the package does not do: it does not read or filter the output directory (that is
// contract's and the scheduler's job), it does not isolate the filesystem (the operator
// runs with the runner's user and can read what the runner can read), and it does not
// schedule: one call, one run.
package runner
