package main

import (
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/topolayer/topolayer/internal/syncbuf"
)

// TestProgress: nothing before progressDelay nor off a terminal; on a terminal, the elapsed
// time rewritten in place, then erased.
func TestProgress(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Unix(0, 0))
	var out syncbuf.Buffer
	p := startProgressOn(&out, true, c, "dry-run of 76 entries")
	waitWaiters(t, c)
	if out.String() != "" {
		t.Fatalf("progress before the delay: %q", out.String())
	}
	c.Step(progressDelay)
	waitFor(t, func() bool { return strings.Contains(out.String(), "dry-run of 76 entries… 2s") })
	waitWaiters(t, c)
	c.Step(time.Second)
	waitFor(t, func() bool { return strings.Contains(out.String(), "… 3s") })
	p.Stop()
	if !strings.HasSuffix(out.String(), "\r\033[K") {
		t.Errorf("the line is not erased: %q", out.String())
	}

	var quiet syncbuf.Buffer
	q := startProgressOn(&quiet, false, c, "x")
	c.Step(time.Minute)
	q.Stop()
	if quiet.String() != "" {
		t.Errorf("progress off a terminal: %q", quiet.String())
	}
	if isTerminal(&quiet) {
		t.Error("a buffer is a terminal")
	}
}

// waitWaiters waits until the progress goroutine waits on the fake clock.
func waitWaiters(t *testing.T, c *clocktesting.FakeClock) {
	t.Helper()
	waitFor(t, c.HasWaiters)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
