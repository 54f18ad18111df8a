package fixtureparity

import "github.com/topolayer/topolayer/contract"

// Pair says which object the operator writes stands for one fixture object.
type Pair struct {
	// Name names the pair in the report ("deployment", "osin-config").
	Name string `json:"name"`
	// Kind and FixtureName identify the fixture object.
	Kind        string `json:"kind"`
	FixtureName string `json:"fixtureName"`
	// Placed is the standalone identity of the operator's object (its final state on the
	// management cluster is compared).
	Placed contract.Identity `json:"placed"`
	// Keys are the data keys that correspond under other names, or that hold a document to
	// parse; a data key not listed is compared under its own name.
	Keys []KeyPair `json:"keys,omitempty"`
	// OnlyKeys compares only the placed object's data keys that Keys names: one placed object
	// holds what several fixture objects hold (the three templates in one Secret).
	OnlyKeys bool `json:"onlyKeys,omitempty"`
}

// KeyPair names one data key on each side.
type KeyPair struct {
	// Fixture and Placed are the key's names in the fixture and in the placed object.
	Fixture string `json:"fixture"`
	Placed  string `json:"placed"`
	// Document: the value is a YAML or JSON document, compared field by field.
	Document bool `json:"document,omitempty"`
}

// DefaultPairs are the pairs of HyperShift's oauth-openshift and the objects the
// cluster-authentication-operator writes for its OAuth server in openshift-authentication.
// HyperShift's ControlPlaneComponent is its own status object, not an operand: it has no pair.
func DefaultPairs() []Pair {
	const ns = "openshift-authentication"
	id := func(group, resource, name string) contract.Identity {
		return contract.Identity{Group: group, Resource: resource, Namespace: ns, Name: name}
	}
	template := func(name, fixtureName, key string) Pair {
		return Pair{Name: name, Kind: "Secret", FixtureName: fixtureName, Placed: id("", "secrets", "v4-0-config-system-ocp-branding-template"),
			Keys: []KeyPair{{Fixture: key, Placed: key}}, OnlyKeys: true}
	}
	return []Pair{
		{Name: "deployment", Kind: "Deployment", FixtureName: "oauth-openshift", Placed: id("apps", "deployments", "oauth-openshift")},
		{Name: "osin-config", Kind: "ConfigMap", FixtureName: "oauth-openshift", Placed: id("", "configmaps", "v4-0-config-system-cliconfig"),
			Keys: []KeyPair{{Fixture: "config.yaml", Placed: "v4-0-config-system-cliconfig", Document: true}}},
		{Name: "audit-policy", Kind: "ConfigMap", FixtureName: "oauth-openshift-audit", Placed: id("", "configmaps", "audit"),
			Keys: []KeyPair{{Fixture: "policy.yaml", Placed: "audit.yaml", Document: true}}},
		{Name: "session", Kind: "Secret", FixtureName: "oauth-openshift-session", Placed: id("", "secrets", "v4-0-config-system-session")},
		template("login-template", "oauth-openshift-default-login-template", "login.html"),
		template("provider-selection-template", "oauth-openshift-default-provider-selection-template", "providers.html"),
		template("error-template", "oauth-openshift-default-error-template", "errors.html"),
		{Name: "pdb", Kind: "PodDisruptionBudget", FixtureName: "oauth-openshift", Placed: id("policy", "poddisruptionbudgets", "oauth-openshift")},
	}
}
