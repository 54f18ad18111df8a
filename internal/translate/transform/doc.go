// Package transform holds the declarative changes the engine runs as stages after renaming:
// a Transform (a named kio.Filter over the objects its match selects, built per object from
// the Context it may know), a user's Patch (strategic merge or JSON 6902, with kustomize's
// patch filters) and the filters the profiles are made of: AddLabels, the pod spec edit
// (NewPodSpecEdit, the strategic merge's result without its walk of the whole object) and
// DropOwnerReferences. The edit reads the merge strategies of the pod-bearing kinds from
// liststrategies.json, kyaml's schema reduced to them, not from the whole schema, which kyaml
// parses on first use (TestListStrategiesTable writes the file from that schema). A filter that changes only some keys of one mapping says so (Scoped),
// and the engine diffs just those.
//
//	t, err := transform.Patch{Name: "replicas", Match: routing.Match{Resource: "deployments"},
//		StrategicMerge: "spec: {replicas: 3}"}.Transform()
//	stages := translate.HostedStages(t)
package transform
