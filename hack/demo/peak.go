package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
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
	for _, pid := range tree(root) {
		total += rss(pid)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peak = max(p.peak, total)
}

// tree returns root and its descendants, from /proc/<pid>/stat's parent ids.
func tree(root int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(data[i+1:]))
		if len(fields) < 2 {
			continue
		}
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		ppid, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// rss returns a process's resident memory (VmRSS), in bytes; 0 when it is gone.
func rss(pid int) uint64 {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
