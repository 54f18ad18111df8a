package parallel

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// workChunk is how many indexes a goroutine of ForEach takes at a time: enough to make the
// hand-out cheap, few enough to share the end of the list.
const workChunk = 32

// ForEach runs f(i) for every i below n, on as many goroutines as the Go runtime runs at once
// (GOMAXPROCS), each taking the next chunk of indexes. f(i) changes only what is i's (an
// entry, a slot of a result) and reads shared state that nothing changes meanwhile: the result does not depend on the order. A short run stays on the
// caller's goroutine.
func ForEach(n int, f func(i int)) {
	procs := min(runtime.GOMAXPROCS(0), n/workChunk)
	if procs < 2 {
		for i := range n {
			f(i)
		}
		return
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		panicked sync.Once
		caught   *goroutinePanic
	)
	for range procs {
		wg.Go(func() {
			defer func() {
				// A panic goes to the caller, as it would have without the goroutines (the
				// scheduler turns an operator run's panic into a failed run).
				if v := recover(); v != nil {
					panicked.Do(func() { caught = &goroutinePanic{value: v, stack: debug.Stack()} })
					next.Store(int64(n)) // the others stop at their next chunk
				}
			}()
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
	if caught != nil {
		panic(caught)
	}
}

// goroutinePanic is a panic of one of ForEach's goroutines, raised again in its caller: the
// value and where it was raised.
type goroutinePanic struct {
	value any
	stack []byte
}

func (p *goroutinePanic) String() string { return fmt.Sprintf("%v\n\n%s", p.value, p.stack) }
