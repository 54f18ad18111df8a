// Package declare proposes, from a plan, the configuration that would place what the plan
// refused for want of a declaration: supplements to the operator's output-resources for what
// it wrote under Unspecified or did not declare, policy entries for privileged objects and
// for kinds the management cluster's allow-list does not hold. A person reviews and pastes
// them; nothing is ever applied from them.
//
//	d := declare.Proposer{Operator: "cao", Router: router, Names: mapper}.Declarations(plan)
//	if !d.Empty() {
//		y, _ := d.YAML() // the snippet to review
//		os.Stdout.Write(y)
//	}
package declare
