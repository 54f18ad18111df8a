// Package translate is topolayer's engine: it takes an operator's standalone-form output
// directory and produces a Plan, an ordered list of target mutations, each with its source,
// the rule that placed it, the transforms applied to it and its disposition (apply,
// absorbed, dropped or rejected). It applies routing (package routing) and name mapping
// (package namespaces) to every mutation, and an escalation Policy (privileged objects, RBAC
// beyond the operator's ceiling) when the engine has one. It is pure: no network, no files, no clock, no
// logging; the same input gives the same plan.
//
//	out, _ := contract.ReadOutputDir("out", contract.ReadOptions{})
//	plan := translate.Standalone("my-operator", declared).Plan(out)
//	if len(plan.Rejected()) > 0 { /* apply nothing */ }
package translate
