package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
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
			pids := descendants(roots)
			var sum int64
			for _, p := range pids {
				sum += procStatusBytes(p, "VmRSS")
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

// descendants returns roots that still exist and all their descendants, from /proc.
func descendants(roots []int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	alive := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
		alive[pid] = true
	}
	var out []int
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] || !alive[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}

// procStatusBytes returns a "kB" field of /proc/<pid>/status (VmRSS, VmHWM) in bytes; 0 if
// the process is gone.
func procStatusBytes(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// mib formats bytes in MiB.
func mib(b int64) float64 { return float64(b) / (1 << 20) }
