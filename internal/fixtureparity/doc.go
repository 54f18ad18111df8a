// Package fixtureparity compares what topolayer places for a real operator with HyperShift's
// own rendering of the same operand (the fixtures HyperShift's component test writes for one
// HostedControlPlane), leaf field by leaf field.
//
// The fixtures are HyperShift's objects (ReadFixtureDir); the placed objects are the final
// states of a hosted plan on the management cluster (parity.FinalState). Pairs (DefaultPairs)
// say which fixture object stands for which object the operator writes, by the operator's
// standalone identity, and which data keys correspond; a data key that holds a document (the
// OAuth server's OsinServerConfig) is parsed and compared field by field, not as text.
// Both objects of a pair are flattened to leaf fields, with lists of named elements keyed by
// name (containers, volumes, env) and volume mounts by mount path:
//
//	spec.template.spec.containers[name=oauth-openshift].image
//	spec.template.spec.containers[name=oauth-openshift].volumeMounts[mountPath=/tmp].name
//	data[config.yaml].oauthConfig.masterCA
//
// Each leaf is equal, or missing (only the fixture has it), extra (only the placed object
// has it) or different; a leaf that is not equal is explained when a row of the reasons
// table (Reasons, DefaultReasons: reasons.yaml, embedded) names why, or when both values
// name the same pair's objects (the fixture's name and the placed name). Every other leaf is
// unexplained, and Report.Err fails; so is every leaf of a fixture object the operator did
// not write.
//
// It is what `topolayer parity --hypershift-fixtures DIR` prints, and it does not run the
// operator, translate, or read any cluster: the package is pure but for ReadFixtureDir.
//
//	fixtures, _ := fixtureparity.ReadFixtureDir("../shared/corpus/hypershift-oauth-openshift")
//	placed, _ := parity.FinalState(engine.Plan(out))
//	v := fixtureparity.Compare("default", fixtures, placed, fixtureparity.DefaultPairs(), fixtureparity.DefaultReasons())
//	fmt.Println(v.Counts, v.DeploymentEqualPercent())
package fixtureparity
