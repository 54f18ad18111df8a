// Command inproc is the in-process side of the cache benchmark: `topolayer run` as a program
// that links its operators in, the way HyperShift's control-plane-operator embeds topolayer
// (manager.AddToManager). It reads the same configuration as the exec side and runs each of
// its operators (op00 ... op09) as fleet.Operator's in-memory runner: the objects gathered
// from the shared caches go to the operator's controllers, its writes come back as objects,
// with no fork, no exec and no directory on disk.
//
//	inproc --config fleet.yaml --kubeconfig admin.kubeconfig --work-dir DIR
package main
