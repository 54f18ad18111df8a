// Command poller is the HyperShift prototype's way of reading inputs, for the polling
// baseline: every 5 seconds, for every operator of the fleet, a GET of each of its inputs
// (package fleet). It writes nothing.
//
//	poller --kubeconfig FILE [--operators 10] [--interval 5s]
package main
