//go:build unix

package translate_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// wideConfigMap is an output dir of one ConfigMap whose data holds keys entries: the shape
// of a body that is wide rather than deep.
func wideConfigMap(keys int) *contract.OutputDir {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide\n  namespace: openshift-sample\ndata:\n")
	for i := range keys {
		fmt.Fprintf(&b, "  k%07d: v%d\n", i, i)
	}
	md := contract.Metadata{
		Action: contract.ActionCreate, Name: "wide", Namespace: "openshift-sample",
		ResourceType: contract.ResourceType{Resource: "configmaps", Version: "v1"},
	}
	return &contract.OutputDir{Mutations: []contract.Mutation{{Class: contract.ClassManagement, Metadata: md, Body: []byte(b.String())}}}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// BenchmarkPlanWideBody plans one ConfigMap of 250,000 and of 1,000,000 keys through the
// hosted engine (the body is renamed and annotated, so it is parsed and written again): the
// time per key must not grow with the number of keys (but for the n log n key sort of
// sigs.k8s.io/yaml's JSONToYAML). cpu-ns/key is the process's CPU time per key, which a
// machine shared with other work does not inflate as it does ns/op.
func BenchmarkPlanWideBody(b *testing.B) {
	engine := syntheticEngine(b, hostedConfig)
	for _, keys := range []int{250000, 1000000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			out := wideConfigMap(keys)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				p := engine.Plan(out)
				if e := p.Entries[0]; e.Disposition != routing.Apply || e.Mutation == nil {
					b.Fatalf("disposition %s (%s): %s", e.Disposition, e.Rule, e.Reason)
				}
			}
			b.StopTimer()
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(keys), "ns/key")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(keys), "cpu-ns/key")
		})
	}
}
