// Package synth generates synthetic apply-configuration output directories, one mix of
// mutation shapes per kind of operator. CAO is shaped like the cluster-authentication-operator
// (CAO) corpus: namespaced and cluster-scoped objects, every contract action, Deployments that
// reference ConfigMaps, Secrets and ServiceAccounts, and events (about half of the corpus's
// mutations). GuestIdentities is an operator whose every workload runs as its own service
// account, with RBAC per account and events naming the workloads: on the hosted topology every
// account is a guest identity. The benchmarks of topolayer's engine, readers and command line
// run on them.
//
//	out := synth.Output(10000)                        // the CAO mix, in memory, deterministic
//	err := synth.Write(dir, 10000)                    // the same, written as a directory
//	gi := synth.GuestIdentities().Output(10000)       // another mix
//
// Every mutation has an identity of its own, so a standalone translation applies all of
// them; a mix repeats every 100 mutations (see Mix).
package synth
