package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
	"k8s.io/utils/clock"
)

// progressDelay is how long work runs before its progress is shown: shorter work ends
// without a word.
const progressDelay = 2 * time.Second

// progress shows, on a terminal, that long work is still running: after progressDelay, a
// line "<what>… 3s" rewritten every second, erased when the work ends. On anything but a
// terminal (a pipe, a file, a test's buffer) it writes nothing, so logs and captured output
// stay clean.
type progress struct {
	w    io.Writer
	what string

	clock clock.WithTicker
	stop  chan struct{}
	done  sync.WaitGroup
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// startProgress starts showing the progress of what on w, when w is a terminal; call Stop
// when the work ends.
func startProgress(w io.Writer, what string) *progress {
	return startProgressOn(w, isTerminal(w), clock.RealClock{}, what)
}

// startProgressOn is startProgress with the terminal test and the clock given.
func startProgressOn(w io.Writer, terminal bool, c clock.WithTicker, what string) *progress {
	p := &progress{w: w, what: what, clock: c, stop: make(chan struct{})}
	if !terminal {
		return p
	}
	p.done.Add(1)
	go p.show()
	return p
}

func (p *progress) show() {
	defer p.done.Done()
	start := p.clock.Now()
	select {
	case <-p.stop:
		return
	case <-p.clock.After(progressDelay):
	}
	tick := p.clock.NewTicker(time.Second)
	defer tick.Stop()
	for {
		fmt.Fprintf(p.w, "\r\033[K%s… %s", p.what, p.clock.Since(start).Round(time.Second))
		select {
		case <-p.stop:
			fmt.Fprint(p.w, "\r\033[K")
			return
		case <-tick.C():
		}
	}
}

// Stop ends the progress line, erasing it; the terminal is left as it was.
func (p *progress) Stop() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.done.Wait()
}
