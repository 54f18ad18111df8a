package plans

// Rule names of the checks the engine makes besides routing and the policy (package
// policy names its own), as Entry.Rule holds them.
const (
	// RuleDeclaredOutputs rejects mutations the operator did not declare for their class.
	RuleDeclaredOutputs = "declared-outputs"
	// RuleUnspecified rejects mutations the operator itself could not place in a class.
	RuleUnspecified = "unspecified-class"
	// RuleNameMapping rejects mutations whose identity cannot be mapped to the target, or
	// whose target another source maps to as well.
	RuleNameMapping = "name-mapping"
	// RuleBody rejects mutations whose body cannot be rewritten.
	RuleBody = "body"
	// RuleGuestNamespace names the entries that create on the guest a namespace the
	// management side absorbed while the operator's guest objects live in it.
	RuleGuestNamespace = "hosted/guest-namespace"
)
