// Command demo is `make demo`: topolayer's whole job on local API servers, nothing to
// configure. It starts a management and a guest cluster (hosted) and one cluster
// (standalone) with envtest, runs both sample operators through `topolayer run` in each
// topology after a user writes their settings, and prints the hosted plan of their last
// runs, what landed where on the live servers, the parity report of the two topologies
// (every difference attributed to the rule or transform that made it), and the elapsed time
// and peak memory. Then it stops everything and removes its data.
//
//	make build && go -C hack run ./demo -bin $PWD/bin -examples $PWD/examples
package main
