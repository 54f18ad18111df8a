package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// figure is one row of the report's summary: a measured value and, when the issue sets
// one, its target and whether this run met it.
type figure struct {
	Section string
	Name    string
	Value   string
	Target  string // "" when the figure has no target (absolute times, counts for context)
	Met     *bool
	Note    string
}

// report collects the figures, the command lines and the prose of every section.
type report struct {
	started  time.Time
	figures  []figure
	commands []string
	sections []string // markdown, one per section, in order
	plots    []string // file names of the plots, relative to the report
}

// add records a figure without a target.
func (r *report) add(section, name, value, note string) {
	r.figures = append(r.figures, figure{Section: section, Name: name, Value: value, Note: note})
}

// target records a figure with its target and whether it was met.
func (r *report) target(section, name, value, target string, met bool, note string) {
	r.figures = append(r.figures, figure{Section: section, Name: name, Value: value, Target: target, Met: &met, Note: note})
}

// command records a command line the run executed.
func (r *report) command(args ...string) {
	r.commands = append(r.commands, strings.Join(args, " "))
}

// section appends a section of prose (markdown).
func (r *report) section(title, body string) {
	r.sections = append(r.sections, "## "+title+"\n\n"+strings.TrimSpace(body)+"\n")
}

// write writes REPORT.md into dir.
func (r *report) write(dir string, argv []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# topolayer benchmarks (issue 7)\n\n")
	fmt.Fprintf(&b, "Written by `%s` on %s, in %s. Every figure below comes from that run.\n",
		strings.Join(argv, " "), r.started.UTC().Format(time.RFC3339), time.Since(r.started).Round(time.Second))
	fmt.Fprintf(&b, "Ratios and counts are judged; absolute times are printed for context only.\n\n")
	b.WriteString("## Machine\n\n")
	b.WriteString(machine())
	b.WriteString("\n## Summary\n\n| section | figure | measured | target | met |\n|---|---|---|---|---|\n")
	for _, f := range r.figures {
		met := ""
		if f.Met != nil {
			met = "**missed**"
			if *f.Met {
				met = "met"
			}
		}
		name := f.Name
		if f.Note != "" {
			name += " (" + f.Note + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", f.Section, name, f.Value, f.Target, met)
	}
	b.WriteString("\n")
	for _, s := range r.sections {
		b.WriteString(s)
		b.WriteString("\n")
	}
	if len(r.plots) > 0 {
		b.WriteString("## Plots\n\n")
		for _, p := range r.plots {
			fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(p, ".png"), p)
		}
	}
	b.WriteString("## Command lines\n\n```\n")
	for _, c := range r.commands {
		b.WriteString(c)
		b.WriteString("\n")
	}
	b.WriteString("```\n")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "REPORT.md"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// machine describes the machine: CPU model and count, memory, kernel, Go, load.
func machine() string {
	var b strings.Builder
	model := "unknown"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	fmt.Fprintf(&b, "- CPU: %s, %d logical CPUs (runtime.NumCPU)\n", model, runtime.NumCPU())
	fmt.Fprintf(&b, "- memory: %.1f GiB total\n", mib(procMeminfo("MemTotal"))/1024)
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		fmt.Fprintf(&b, "- kernel: Linux %s\n", strings.TrimSpace(string(data)))
	}
	fmt.Fprintf(&b, "- Go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(&b, "- load average at the end of the run (the machine is shared): %s\n", strings.Join(strings.Fields(string(data))[:3], " "))
	}
	return b.String()
}

// procMeminfo returns a field of /proc/meminfo in bytes.
func procMeminfo(field string) int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}
