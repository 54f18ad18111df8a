// Command resident is one operator of the cache benchmark run the way operators run today:
// a resident controller-runtime manager with its own cache and leader election, watching
// its inputs (package fleet) and applying its output ConfigMap whenever one changes.
//
//	resident --kubeconfig FILE --operator op03
package main
