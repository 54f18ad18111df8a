// Package translate is topolayer's engine: it takes an operator's standalone-form output
// directory and produces a Plan, an ordered list of target mutations, each with its source,
// the rule that placed it, the transforms applied to it and its disposition (apply,
// absorbed, dropped or rejected). Each applied Entry carries its final Object and the Changes
// made to it on the way (path, from, to, and the step, rule or transform that made it). It
// applies routing (package routing), name mapping (package namespaces), the reference table
// and the transforms to every mutation, and last, on the final objects, an escalation Policy
// (privileged objects, RBAC beyond the operator's ceiling) when the engine has one. It is
// pure: no network, no files, no clock, no logging; the same input gives the same plan.
//
//	out, _ := contract.ReadOutputDir("out", contract.ReadOptions{})
//	plan := translate.Standalone("my-operator", declared).Plan(out)
//	if len(plan.Rejected()) > 0 { /* apply nothing */ }
package translate
