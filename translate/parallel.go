package translate

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// workChunk is how many works a goroutine of forEach takes at a time: enough to make the
// hand-out cheap, few enough to share the end of the list.
const workChunk = 32

// eachWork runs f on every work, as forEach does.
func eachWork(works []*work, f func(*work)) {
	forEach(len(works), func(i int) { f(works[i]) })
}

// forEach runs f(i) for every i below n, on as many goroutines as the Go runtime runs at once
// (GOMAXPROCS), each taking the next chunk of indexes. f(i) changes only what is i's (a work,
// a slot of a result) and reads the plan-wide state (the engine, the placement index), which
// nothing changes meanwhile: the result does not depend on the order. A short run stays on the
// caller's goroutine.
func forEach(n int, f func(i int)) {
	procs := min(runtime.GOMAXPROCS(0), n/workChunk)
	if procs < 2 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range procs {
		wg.Go(func() {
			for {
				start := int(next.Add(workChunk)) - workChunk
				if start >= n {
					return
				}
				for i := start; i < min(start+workChunk, n); i++ {
					f(i)
				}
			}
		})
	}
	wg.Wait()
}
