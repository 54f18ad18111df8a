package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest/synth"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/topology"
)

// translationResult holds section 1's measurements of one mix on one topology.
type translationResult struct {
	mix, topology string
	sizes         []sizeResult
}

// sizeResult is the parse floor and the full translation of one synthetic directory.
type sizeResult struct {
	n                 int
	floor, translated time.Duration // medians
	peak              int64         // the largest peak RSS of the repetitions
	reps              int
}

// at returns the result of n mutations, and whether there is one.
func (r translationResult) at(n int) (sizeResult, bool) {
	for _, s := range r.sizes {
		if s.n == n {
			return s, true
		}
	}
	return sizeResult{}, false
}

// translationTopology is a topology `topolayer translate` runs on in section 1: its
// configuration file and the flags it needs.
type translationTopology struct {
	name  string
	cfg   string // the configuration's text
	flags []string
	file  string // where the configuration is written
}

// parseFloor reads every file of an output directory and decodes every body (with the YAML
// parser the engine uses) and every metadata file: what any translator must do at least.
func parseFloor(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := d.Name()
		isBody, isMeta := strings.Contains(base, "-body-"), strings.Contains(base, "-metadata-")
		if !isBody && !isMeta {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("parse floor: %w", err)
		}
		if isMeta {
			if _, err := contract.ParseMetadata(data); err != nil {
				return fmt.Errorf("parse floor: %s: %w", path, err)
			}
			n++
			return nil
		}
		if _, err := yaml.Parse(string(data)); err != nil {
			return fmt.Errorf("parse floor: %s: %w", path, err)
		}
		return nil
	})
	return n, err
}

// translateCLI runs `topolayer translate` on from (the standalone topology of cfgFile), into
// to, and returns its wall time and peak RSS, both as peakrss measures them (the command's
// own getrusage maxrss, not the harness's: see package peakrss), with topo's configuration
// and flags. The output size limit is
// raised past the synthetic directories' size: the default refuses more than 64 MiB.
func (h *harness) translateCLI(topo translationTopology, from, to string) (time.Duration, int64, error) {
	args := append([]string{h.bin("topolayer"), "translate", "--config", topo.file}, topo.flags...)
	args = append(args, "--max-output-size", "4Gi", "--from", from, "--to", to)
	cmd := exec.Command(h.benchBin("peakrss"), args...)
	outb, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, outb)
	}
	lines := strings.Split(strings.TrimSpace(string(outb)), "\n")
	var peak, wall int64
	if _, err := fmt.Sscanf(lines[len(lines)-1], "peakrss %d %d", &peak, &wall); err != nil {
		return 0, 0, fmt.Errorf("%s: peakrss: %w\n%s", strings.Join(args, " "), err, outb)
	}
	return time.Duration(wall), peak, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// translationSizes are the sizes of section 1's directories and the repetitions of each
// (the medians of so many); the hosted topology, which holds the whole plan, has its own.
func (h *harness) translationSizes(topology string) ([]int, map[int]int) {
	if h.quick {
		return []int{1000, 10000}, map[int]int{1000: 3, 10000: 1}
	}
	if topology == "hosted" {
		return []int{1000, 10000, 100000}, map[int]int{1000: 3, 10000: 3, 100000: 1}
	}
	return []int{1000, 10000, 100000}, map[int]int{1000: 5, 10000: 3, 100000: 1}
}

// runTranslation runs section 1: every mix of package synth, translated on the standalone
// and the hosted topology, and the in-memory engines on each mix.
func (h *harness) runTranslation() error {
	h.logf("== 1. translation (scratch %s)", h.scratch)
	topologies := []translationTopology{
		{name: "standalone", cfg: "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Standalone\n"},
		{name: "hosted", cfg: synth.HostedConfig, flags: []string{"--operator", "synthetic"}},
	}
	for i, topo := range topologies {
		topologies[i].file = filepath.Join(h.scratch, topo.name+".yaml")
		if err := os.WriteFile(topologies[i].file, []byte(topo.cfg), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", topologies[i].file, err)
		}
		h.rep.command(append(append([]string{h.bin("topolayer"), "translate", "--config", topologies[i].file}, topo.flags...), "--max-output-size", "4Gi", "--from", "DIR", "--to", "DIR")...)
	}
	var results []translationResult
	for _, mix := range synth.Mixes() {
		rs, err := h.translateMix(mix, topologies)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	for _, r := range results {
		h.reportTranslation(r)
	}
	for _, mix := range synth.Mixes() {
		if err := h.benchmarkEngines(mix); err != nil {
			return err
		}
	}
	h.translationSection(results)
	h.plotTranslation(results)
	return nil
}

// translateMix measures the parse floor and `topolayer translate` on every topology, on a
// directory of mix at each size.
func (h *harness) translateMix(mix synth.Mix, topologies []translationTopology) ([]translationResult, error) {
	results := make([]translationResult, len(topologies))
	for i, topo := range topologies {
		results[i] = translationResult{mix: mix.Name(), topology: topo.name}
	}
	sizes, _ := h.translationSizes("")
	for _, n := range sizes {
		dir := filepath.Join(h.scratch, fmt.Sprintf("synthetic-%s-%d", mix.Name(), n))
		start := time.Now()
		if err := mix.Write(dir, n); err != nil {
			return nil, err
		}
		h.logf("generated %d mutations of the %s mix in %s", n, mix.Name(), time.Since(start).Round(time.Millisecond))
		for i, topo := range topologies {
			_, reps := h.translationSizes(topo.name)
			sr := sizeResult{n: n, reps: reps[n]}
			var floors, translations []time.Duration
			for rep := range reps[n] {
				// Interleaved, so that the machine's load (it is shared) weighs on both alike.
				start := time.Now()
				files, err := parseFloor(dir)
				if err != nil {
					return nil, err
				}
				floors = append(floors, time.Since(start))
				if files != n {
					return nil, fmt.Errorf("parse floor: %d metadata files, want %d", files, n)
				}
				to := filepath.Join(h.scratch, fmt.Sprintf("translated-%d-%d", n, rep))
				wall, peak, err := h.translateCLI(topo, dir, to)
				if err != nil {
					return nil, err
				}
				translations = append(translations, wall)
				sr.peak = max(sr.peak, peak)
				if err := os.RemoveAll(to); err != nil {
					return nil, fmt.Errorf("remove %s: %w", to, err)
				}
			}
			sr.floor, sr.translated = median(floors), median(translations)
			h.logf("%s mix, %s, %d mutations: parse floor %s, translate %s (medians of %d), peak RSS %.0f MiB", mix.Name(), topo.name, n, sr.floor.Round(time.Millisecond), sr.translated.Round(time.Millisecond), reps[n], mib(sr.peak))
			results[i].sizes = append(results[i].sizes, sr)
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("remove %s: %w", dir, err)
		}
	}
	return results, nil
}

// reportTranslation records the targets of `topolayer translate` on one mix and topology:
// the ratio to the parse floor, peak RSS and growth.
func (h *harness) reportTranslation(r translationResult) {
	const sec = "1 translation"
	of := fmt.Sprintf("%s mix, %s", r.mix, r.topology)
	if ten, ok := r.at(10000); ok {
		ratio := ten.translated.Seconds() / ten.floor.Seconds()
		h.rep.target(sec, "translate/parse ratio, 10,000 mutations, "+of, fmt.Sprintf("%.2f", ratio), "≤ 1.5", ratio <= 1.5,
			fmt.Sprintf("floor %s, translate %s", ten.floor.Round(time.Millisecond), ten.translated.Round(time.Millisecond)))
		h.rep.target(sec, "peak RSS of `topolayer translate`, 10,000 mutations, "+of, fmt.Sprintf("%.0f MiB", mib(ten.peak)), "≤ 150 MiB", mib(ten.peak) <= 150,
			"getrusage maxrss of the process, through peakrss: its own, not the harness's")
	}
	if big, ok := r.at(100000); ok {
		h.rep.target(sec, "peak RSS of `topolayer translate`, 100,000 mutations, "+of, fmt.Sprintf("%.0f MiB", mib(big.peak)), "≤ 300 MiB", mib(big.peak) <= 300,
			"getrusage maxrss of the process, through peakrss: its own, not the harness's")
	}
	// Growth: time per mutation at each size.
	var growth, floorGrowth []string
	per := map[int]float64{}
	for _, s := range r.sizes {
		per[s.n] = float64(s.translated.Microseconds()) / float64(s.n)
		growth = append(growth, fmt.Sprintf("%dk: %.0f µs", s.n/1000, per[s.n]))
		floorGrowth = append(floorGrowth, fmt.Sprintf("%dk: %.0f µs", s.n/1000, float64(s.floor.Microseconds())/float64(s.n)))
	}
	last := r.sizes[len(r.sizes)-1]
	growthRatio := per[last.n] / per[1000]
	h.rep.target(sec, fmt.Sprintf("growth: translate time per mutation, %dk vs 1k, %s", last.n/1000, of), fmt.Sprintf("%.2f× (%s)", growthRatio, strings.Join(growth, ", ")), "linear (≤ 1.5×)", growthRatio <= 1.5, "")
	h.rep.add(sec, "growth: parse floor per mutation, "+of, strings.Join(floorGrowth, ", "), "")
}

// benchmarkEngines runs the in-memory engines on mix, as Go benchmarks (the same code as
// translate's BenchmarkPlanStandalone, BenchmarkPlanHosted and their mix's variants): the
// bodies are parsed before, as the reader parses them; the parse is the floor's.
func (h *harness) benchmarkEngines(mix synth.Mix) error {
	const sec = "1 translation"
	out := mix.Output(10000)
	if err := contract.ParseObjects(out, nil); err != nil {
		return err
	}
	standalone := translate.Standalone("synthetic", nil)
	br := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			standalone.Plan(out)
		}
	})
	mps := 10000 * float64(br.N) / br.T.Seconds()
	h.rep.target(sec, "in-memory engine, standalone, mutations/s, "+mix.Name()+" mix", fmt.Sprintf("%.0f", mps), "≥ 100,000/s", mps >= 100000,
		fmt.Sprintf("testing.Benchmark, %d × 10,000 mutations", br.N))
	h.rep.add(sec, "in-memory engine, standalone, allocations per mutation, "+mix.Name()+" mix", fmt.Sprintf("%.0f (%.1f KiB)", float64(br.AllocsPerOp())/10000, float64(br.AllocedBytesPerOp())/10000/1024), "")
	h.logf("engine standalone, %s mix: %.0f mutations/s, %d allocs/op", mix.Name(), mps, br.AllocsPerOp())
	hostedCfg, err := config.Parse([]byte(synth.HostedConfig))
	if err != nil {
		return fmt.Errorf("hosted configuration: %w", err)
	}
	hostedEngine, err := topology.Engine(hostedCfg, "synthetic", nil)
	if err != nil {
		return fmt.Errorf("hosted engine: %w", err)
	}
	// The hosted engine, the same way, at 1,000 and 10,000 mutations (its cost per
	// mutation must not grow with the directory). A plan of 10,000 takes about half the
	// benchmark's second, so one testing.Benchmark is one or two plans, each growing the heap
	// from what the runtime.GC before it left: the rate is the median of three.
	hostedRate := map[int]float64{}
	hostedRuns := map[int][]string{}
	var hostedAllocs string
	for _, n := range []int{1000, 10000} {
		o := mix.Output(n)
		if err := contract.ParseObjects(o, nil); err != nil {
			return err
		}
		var rates []float64
		for range 3 {
			br := testing.Benchmark(func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					hostedEngine.Plan(o)
				}
			})
			rate := float64(n) * float64(br.N) / br.T.Seconds()
			rates = append(rates, rate)
			hostedRuns[n] = append(hostedRuns[n], fmt.Sprintf("%.0f", rate))
			hostedAllocs = fmt.Sprintf("%.0f (%.1f KiB)", float64(br.AllocsPerOp())/float64(n), float64(br.AllocedBytesPerOp())/float64(n)/1024)
			h.logf("engine hosted, %s mix, %d mutations: %.0f mutations/s (%d × %d), %d allocs/op", mix.Name(), n, rate, br.N, n, br.AllocsPerOp())
		}
		slices.Sort(rates)
		hostedRate[n] = rates[1]
	}
	slowest := min(hostedRate[1000], hostedRate[10000])
	h.rep.target(sec, "in-memory engine, hosted, mutations/s at 1,000 / 10,000, "+mix.Name()+" mix", fmt.Sprintf("%.0f / %.0f", hostedRate[1000], hostedRate[10000]), "≥ 20,000/s", slowest >= 20000,
		fmt.Sprintf("median of three testing.Benchmark runs (1,000: %s; 10,000: %s), on every core (GOMAXPROCS %d); simulated namespaces, references, recorded identity, guest identities, the hypershift profile, policy",
			strings.Join(hostedRuns[1000], ", "), strings.Join(hostedRuns[10000], ", "), runtime.GOMAXPROCS(0)))
	h.rep.add(sec, "in-memory engine, hosted, allocations per mutation (10,000), "+mix.Name()+" mix", hostedAllocs, "")
	return nil
}

// translationSection writes section 1's prose and its table.
func (h *harness) translationSection(results []translationResult) {
	var tbl strings.Builder
	tbl.WriteString("| mix | topology | mutations | parse floor | translate to disk | ratio | peak RSS | repetitions (median) |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		for _, s := range r.sizes {
			fmt.Fprintf(&tbl, "| %s | %s | %d | %s | %s | %.2f | %.0f MiB | %d |\n", r.mix, r.topology, s.n, s.floor.Round(time.Millisecond), s.translated.Round(time.Millisecond), s.translated.Seconds()/s.floor.Seconds(), mib(s.peak), s.reps)
		}
	}
	var mixes strings.Builder
	for _, m := range synth.Mixes() {
		fmt.Fprintf(&mixes, "- the %s mix, per 100 mutations: ", m.Name())
		for _, s := range m.Shapes() {
			fmt.Fprintf(&mixes, "%d %s; ", s.PerHundred, s.Name)
		}
		mixes.WriteString("\n")
	}
	h.rep.section("1. Translation", fmt.Sprintf(`
The synthetic directories come from package contract/contracttest/synth, one mix per shape of operator:

%s
Each directory is translated on the standalone topology and on the hosted one (synth.HostedConfig, --operator synthetic: simulated namespaces, references, guest identities, the hypershift profile, policy).
The two measurements alternate on the same directory (the machine is shared), on %s; the parse floor runs in the harness's process.
The parse floor reads every body and metadata file and decodes each (bodies with kyaml's parser, which the engine uses; metadata with contract.ParseMetadata).
"Translate to disk" is `+"`topolayer translate`"+` itself, run as a process (its start included): it streams the directory (contract.WalkOutputDir checks every body against its metadata and parses it once), plans each mutation (translate.Planner), writes each settled entry's files on another goroutine while it reads the next (contract.FolderWriter) and keeps its plan.json form in a spill file (translate.Planner.SpillTo), then writes plan.json from the spill and the entries the plan-wide stages held (Planner.WritePlan). Its wall time and peak RSS are measured by peakrss, a small process between the harness and the command, so the peak is the command's own.

%s`, mixes.String(), h.scratch, tbl.String()))
}
