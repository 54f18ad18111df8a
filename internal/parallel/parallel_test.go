package parallel

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// TestForEach: ForEach runs f once for every index, on several goroutines or on the caller's
// for a short run, and a panic in one of its goroutines reaches the caller, as it would
// without them, saying where it was raised.
func TestForEach(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, workChunk, 2*workChunk + 1, 4096} {
		counts := make([]atomic.Int32, n)
		ForEach(n, func(i int) { counts[i].Add(1) })
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Fatalf("n %d: index %d ran %d times", n, i, c)
			}
		}
	}
	defer func() {
		v := recover()
		if v == nil {
			t.Fatal("no panic reached the caller")
		}
		if s := fmt.Sprint(v); !strings.Contains(s, "entry 1000") || !strings.Contains(s, "parallel_test.go") {
			t.Fatalf("the panic says %q", s)
		}
	}()
	ForEach(4096, func(i int) {
		if i == 1000 {
			panic(fmt.Sprintf("entry %d", i))
		}
	})
}
