// Package scope keeps a simulated namespace a namespace for what an operand relies on, once
// the objects of many standalone namespaces share the HCP namespace (Rule): a Scoper labels
// the pods and pod templates of an object with their standalone namespace and narrows its
// selectors (a Service's, a workload's, a PodDisruptionBudget's, a NetworkPolicy's, pod
// affinity and spread terms) to that label; Unscope undoes it on an object mapped back.
// Check reads a hosted plan's final objects for what still reaches beyond its simulated
// namespace (RuleCheck): a selector, a reference to a renamed object, a status entry. The
// engine reads each object's Facts from the tree it rewrote (ReadFacts) and judges them once
// the plan is known (CheckFacts), so that no tree is built twice.
//
//	s := &scope.Scoper{Namespace: "openshift-authentication", HCP: "clusters-demo", Operator: "cao",
//		Simulated: func(ns string) bool { return ns == "openshift-authentication" }}
//	if err := s.Scope(obj, "apps", "deployments"); err != nil { /* ... */ }
//	// s.Warnings: selectors left as they are
package scope
