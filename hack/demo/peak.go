package main

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/topolayer/topolayer/hack/proctree"
)

// peakRSS tracks the peak of the summed resident memory of a process and all its
// descendants (the API servers, etcd, topolayer and the operators it runs), sampled.
type peakRSS struct {
	mu   sync.Mutex
	peak uint64
}

// watchPeakRSS samples the process tree of root every 200ms until ctx is done.
func watchPeakRSS(ctx context.Context, root int) *peakRSS {
	p := &peakRSS{}
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			p.sample(root)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// Peak returns the highest total seen, in bytes, after one last sample.
func (p *peakRSS) Peak() uint64 {
	p.sample(os.Getpid())
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

func (p *peakRSS) sample(root int) {
	var total uint64
	for _, pid := range proctree.Descendants(root) {
		total += uint64(proctree.StatusBytes(pid, "VmRSS"))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peak = max(p.peak, total)
}
