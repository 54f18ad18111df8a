// Package parallel runs the independent steps of a computation on every core: the engine's
// rewrite and checks of each entry, the scope check of each object. ForEach hands out the
// indexes in chunks and raises a step's panic again in its caller; the result does not
// depend on the order in which the steps ran.
//
//	out := make([]int, len(in))
//	parallel.ForEach(len(in), func(i int) { out[i] = in[i] * in[i] })
package parallel
