// Package synth generates synthetic apply-configuration output directories shaped like the
// cluster-authentication-operator (CAO) corpus: namespaced and cluster-scoped objects, every
// contract action, Deployments that reference ConfigMaps, Secrets and ServiceAccounts, and
// events (about half of the corpus's mutations). The benchmarks of topolayer's engine,
// readers and command line run on them.
//
//	out := synth.Output(10000)                       // in memory, deterministic
//	err := synth.Write(dir, 10000)                   // the same, written as a directory
//
// Every mutation has an identity of its own, so a standalone translation applies all of
// them; the mix repeats every 100 mutations (see mix).
package synth
