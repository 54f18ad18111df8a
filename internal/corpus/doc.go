// Package corpus finds the shared corpus of real operator inputs and outputs (the
// cluster-authentication-operator's and multi-operator-manager's apply-configuration test
// cases) for tests. The corpus is never copied into this repository: tests reach it through
// the TOPOLAYER_CORPUS environment variable and skip, saying so, when it is not set.
//
//	for _, c := range corpus.Cases(t) { // skips t when TOPOLAYER_CORPUS is unset
//		out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
//		...
//	}
package corpus
