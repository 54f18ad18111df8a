package main

import (
	"sync"
	"time"

	"github.com/topolayer/topolayer/hack/proctree"
)

// memSampler samples the resident memory of process trees: the roots it is given and all
// their descendants, every interval, and integrates it over time.
type memSampler struct {
	interval time.Duration

	mu        sync.Mutex
	roots     map[int]bool
	peak      int64   // peak of the sampled sum, bytes
	byteSecs  float64 // integral of the sum over time, byte-seconds
	last      int64
	samples   int
	procsPeak int
	stop      chan struct{}
	done      chan struct{}
}

// newMemSampler starts sampling the trees of roots (more may be added) every interval.
func newMemSampler(interval time.Duration, roots ...int) *memSampler {
	s := &memSampler{interval: interval, roots: map[int]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	for _, r := range roots {
		s.roots[r] = true
	}
	go s.loop()
	return s
}

// add adds the tree of root to what is sampled.
func (s *memSampler) add(root int) {
	s.mu.Lock()
	s.roots[root] = true
	s.mu.Unlock()
}

func (s *memSampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	prev := time.Now()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			roots := make([]int, 0, len(s.roots))
			for r := range s.roots {
				roots = append(roots, r)
			}
			s.mu.Unlock()
			pids := proctree.Descendants(roots...)
			var sum int64
			for _, p := range pids {
				sum += proctree.StatusBytes(p, "VmRSS")
			}
			s.mu.Lock()
			s.byteSecs += float64(sum) * now.Sub(prev).Seconds()
			s.last = sum
			s.peak = max(s.peak, sum)
			s.procsPeak = max(s.procsPeak, len(pids))
			s.samples++
			s.mu.Unlock()
			prev = now
		}
	}
}

// memStats is what a sampler measured.
type memStats struct {
	// PeakBytes is the highest sampled sum of VmRSS over the trees.
	PeakBytes int64
	// GBSeconds is the sum of VmRSS integrated over the sampling time, in GB·s (10^9 bytes).
	GBSeconds float64
	// LastBytes is the last sampled sum.
	LastBytes int64
	// Samples is how many samples were taken; PeakProcesses the most processes seen at once.
	Samples, PeakProcesses int
}

// finish stops the sampler and returns its figures.
func (s *memSampler) finish() memStats {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return memStats{PeakBytes: s.peak, GBSeconds: s.byteSecs / 1e9, LastBytes: s.last, Samples: s.samples, PeakProcesses: s.procsPeak}
}

// snapshot returns the figures so far without stopping.
func (s *memSampler) snapshot() memStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return memStats{PeakBytes: s.peak, GBSeconds: s.byteSecs / 1e9, LastBytes: s.last, Samples: s.samples, PeakProcesses: s.procsPeak}
}

// mib formats bytes in MiB.
func mib(b int64) float64 { return float64(b) / (1 << 20) }
