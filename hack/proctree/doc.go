// Package proctree measures a tree of processes from /proc (Linux): which processes descend
// from given roots, and their memory. The demo and the benchmarks measure topolayer, its
// operators and the API servers with it.
//
//	var rss int64
//	for _, pid := range proctree.Descendants(os.Getpid()) {
//		rss += proctree.StatusBytes(pid, "VmRSS")
//	}
package proctree
