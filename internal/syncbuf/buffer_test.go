package syncbuf_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/topolayer/topolayer/internal/syncbuf"
)

// TestTail: Tail keeps the last n bytes and marks what it left out.
func TestTail(t *testing.T) {
	tests := map[string]struct {
		written string
		n       int
		want    string
	}{
		"shorter than n": {written: "abc", n: 8, want: "abc"},
		"exactly n":      {written: "abcd", n: 4, want: "abcd"},
		"longer than n":  {written: "abcdef", n: 2, want: "…ef"},
		"nothing":        {n: 2, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b syncbuf.Buffer
			fmt.Fprint(&b, tc.written)
			if got := b.Tail(tc.n); got != tc.want {
				t.Errorf("Tail(%d) = %q, want %q", tc.n, got, tc.want)
			}
			if got := b.String(); got != tc.written {
				t.Errorf("String() = %q, want %q", got, tc.written)
			}
		})
	}
}

// TestConcurrent: reads while a goroutine writes are safe (run with -race).
func TestConcurrent(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 100 {
			fmt.Fprint(&b, "x")
		}
	})
	for range 100 {
		_ = b.Tail(10)
	}
	wg.Wait()
	if got := len(b.String()); got != 100 {
		t.Errorf("%d bytes, want 100", got)
	}
}
