package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReportCaches writes the cache sections' report from made-up side results: every side
// and figure the report names is present, the targets are judged from the numbers, and the
// plots are written. (The numbers are the test's; the harness measures real ones.)
func TestReportCaches(t *testing.T) {
	side := func(name string, total, mutating int, idle time.Duration, lat time.Duration) *sideResult {
		r := &sideResult{name: name, processes: 1, changes: 3, idleWindow: idle, runWindow: time.Minute, ready: time.Second}
		r.workload = auditCounts{total: total, mutating: mutating, watches: 8, gets: 3, leases: 2}
		if idle > 0 {
			r.idle = auditCounts{total: 1, leases: 1}
		}
		r.mem.PeakBytes, r.mem.LastBytes, r.mem.GBSeconds = 80<<20, 70<<20, 5
		r.latencies = []time.Duration{lat / 2, lat}
		return r
	}
	a := side("a-resident", 1400, 1300, time.Minute, 30*time.Millisecond)
	a.workload.watches = 50
	b := side("b-topolayer-debounce-0s", 900, 800, time.Minute, time.Second)
	d2 := side("b-topolayer-debounce-2s", 700, 600, 0, 2*time.Second)
	c := side("c-inprocess-debounce-0s", 1300, 1200, time.Minute, 300*time.Millisecond)
	c2 := side("c-inprocess-debounce-2s", 600, 500, 0, 2*time.Second)

	h := &harness{out: t.TempDir(), rep: &report{started: time.Now()}, start: time.Now()}
	h.reportCaches(a, b, d2, c, c2)
	if err := h.rep.write(h.out, []string{"bench"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(h.out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(data)
	for _, want := range []string{
		"all requests, topolayer (in-process) / resident, debounce 0 (audit log) | 0.929 (1300 / 1400) | ≤ 1.0 | met",
		"all requests, topolayer (in-process) / resident, debounce 2s (audit log) | 0.429 (600 / 1400) | ≤ 0.5 | met",
		"exec runner: 800) | 1200 vs 1300 | topolayer ≤ resident | met",
		"latency p99, in-process, debounce 0 (p50 150ms) | 300ms | ≤ 500ms | met",
		"latency p99, exec runner, debounce 0 (p50 500ms) | 1s | ≤ 1.5s | met",
		"idle requests per minute, topolayer (in-process) (c) (audit log, 1m0s idle) | 1.0 (1 leases) | lease renewals only | met",
		"| c-inprocess-debounce-2s | 1 |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report does not say %q:\n%s", want, report)
		}
	}
	for _, plot := range []string{"caches.png", "latency-cdf.png"} {
		if _, err := os.Stat(filepath.Join(h.out, plot)); err != nil {
			t.Errorf("plot %s: %v", plot, err)
		}
	}
}
