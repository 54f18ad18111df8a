package translate

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// workChunk is how many works a goroutine of eachWork takes at a time: enough to make the
// hand-out cheap, few enough to share the end of the list.
const workChunk = 32

// eachWork runs f on every work, on as many goroutines as the Go runtime runs at once
// (GOMAXPROCS), each taking the next chunk of works. f changes only the work it is given and
// reads the plan-wide state (the engine, the placement index), which nothing changes
// meanwhile: the result does not depend on the order. A short list runs on the caller's
// goroutine.
func eachWork(works []*work, f func(*work)) {
	procs := min(runtime.GOMAXPROCS(0), len(works)/workChunk)
	if procs < 2 {
		for _, w := range works {
			f(w)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range procs {
		wg.Go(func() {
			for {
				start := int(next.Add(workChunk)) - workChunk
				if start >= len(works) {
					return
				}
				for _, w := range works[start:min(start+workChunk, len(works))] {
					f(w)
				}
			}
		})
	}
	wg.Wait()
}
