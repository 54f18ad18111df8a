// Package oidctest is test support: Provider serves an OpenID provider's discovery document
// on loopback over TLS, for tests that give the cluster-authentication-operator an OpenID
// identity provider (the operator reads the document when it runs, so its sandbox's egress
// is what those tests check).
//
//	var served atomic.Int32
//	issuer, caPEM := oidctest.Provider(t, &served)
//	// ... an OAuth identity provider with issuer, its CA in a ConfigMap ...
//	if served.Load() == 0 { t.Error("the operator did not read the discovery document") }
package oidctest
