// Package determinism finds the controllers of an operator whose outputs depend on chance:
// it runs the operator's apply-configuration several times on the same input directory with
// the same --now, and compares what each controller wrote.
//
// The multi-operator-manager contract's apply-configuration runs an operator's controllers in
// a random order on purpose (libraryapplyconfiguration shuffles them), so that a controller
// that reads what another one of the same process learned, rather than its inputs, shows as
// a controller whose output changes from run to run. Such an operator converges only by
// luck: under `topolayer run` it needs more runs than it should. Compare names them.
//
// Compare groups the mutations of every run by controller (the metadata's
// controllerInstanceName) and by object (class, action and identity), and reports, per
// controller, the objects it wrote in some runs and not in others, and those whose bodies
// (or options, patch type, field manager) differ between runs. Events, whose names carry a
// random suffix, are compared by involved object, reason and message, under the pseudo
// controller "(events)". Each controller's entry in controller-results.yaml (status and
// errors) is compared too, and so is the operator's exit code, under "(exit code)".
//
// A controller whose bodies differ in every run usually writes random content (a generated
// key, a certificate request) rather than depending on the order; the report says "a
// different body in each run" so that a reader can tell the two apart.
package determinism
