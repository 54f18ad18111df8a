package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// harness holds the run's configuration and its report.
type harness struct {
	out, binDir, assets, scratch string
	benchBinDir                  string
	quick                        bool
	sides                        string
	rep                          *report
	start                        time.Time
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%6s] %s\n", time.Since(h.start).Round(time.Second), fmt.Sprintf(format, args...))
}

// bin returns the path of one of topolayer's binaries (make build).
func (h *harness) bin(name string) string { return filepath.Join(h.binDir, name) }

// benchBin returns the path of one of the benchmark's own binaries.
func (h *harness) benchBin(name string) string { return filepath.Join(h.benchBinDir, name) }

func main() {
	h := &harness{rep: &report{started: time.Now()}, start: time.Now()}
	defaultScratch := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		defaultScratch = "/dev/shm"
	}
	flag.StringVar(&h.out, "out", "bench", "directory of REPORT.md and the plots")
	flag.StringVar(&h.binDir, "bin", "bin", "directory of topolayer's binaries (make build)")
	flag.StringVar(&h.assets, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory of kube-apiserver and etcd (hack/envtest-assets.sh)")
	scratchRoot := flag.String("scratch", defaultScratch, "where the synthetic directories, logs and work directories go (removed at the end)")
	sections := flag.String("sections", "translation,caches,scale", "sections to run")
	flag.BoolVar(&h.quick, "quick", false, "smaller sizes, for trying the harness out")
	flag.StringVar(&h.sides, "sides", "", "with caches: only these sides (a, b, b2, c, c2), for trying one out; the report needs all (default)")
	keep := flag.Bool("keep", false, "keep the scratch directory")
	flag.Parse()
	// controller-runtime's and envtest's own logs: errors only.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := h.run(ctx, *scratchRoot, *sections, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func (h *harness) run(ctx context.Context, scratchRoot, sections string, keep bool) error {
	var err error
	if h.binDir, err = filepath.Abs(h.binDir); err != nil {
		return fmt.Errorf("-bin: %w", err)
	}
	if h.assets == "" {
		return fmt.Errorf("-assets or KUBEBUILDER_ASSETS: the directory of kube-apiserver and etcd (hack/envtest-assets.sh prints it)")
	}
	if _, err := os.Stat(h.bin("topolayer")); err != nil {
		return fmt.Errorf("-bin: %w (run make build)", err)
	}
	if h.scratch, err = os.MkdirTemp(scratchRoot, "topolayer-bench-"); err != nil {
		return fmt.Errorf("scratch: %w", err)
	}
	if !keep {
		defer os.RemoveAll(h.scratch)
	}
	h.logf("scratch %s", h.scratch)
	h.benchBinDir = filepath.Join(h.scratch, "bin")
	// The helpers are packages of the hack module, built from its directory.
	root, err := cluster.ModuleRoot()
	if err != nil {
		return err
	}
	args := []string{"go", "build", "-o", h.benchBinDir + "/", "./bench/benchop", "./bench/inproc", "./bench/resident", "./bench/poller", "./bench/peakrss"}
	h.rep.command(append([]string{"go", "-C", "hack"}, args[1:]...)...)
	build := exec.CommandContext(ctx, args[0], args[1:]...)
	build.Dir = filepath.Join(root, "hack")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	want := map[string]bool{}
	for s := range strings.SplitSeq(sections, ",") {
		want[strings.TrimSpace(s)] = true
	}
	var failed []string
	step := func(name string, f func() error) {
		if !want[name] || ctx.Err() != nil {
			return
		}
		start := time.Now()
		if err := f(); err != nil {
			h.logf("%s failed: %v", name, err)
			failed = append(failed, name)
			h.rep.section("FAILED: "+name, fmt.Sprintf("The section failed after %s: `%v`. Its figures are missing from this report.", time.Since(start).Round(time.Second), err))
			return
		}
		h.logf("%s done in %s", name, time.Since(start).Round(time.Second))
	}
	step("translation", h.runTranslation)
	step("caches", func() error { return h.runCaches(ctx) })
	step("scale", func() error { return h.runScale(ctx) })
	if err := h.rep.write(h.out, os.Args); err != nil {
		return err
	}
	h.logf("wrote %s", filepath.Join(h.out, "REPORT.md"))
	if len(failed) > 0 {
		return fmt.Errorf("sections failed: %s", strings.Join(failed, ", "))
	}
	return ctx.Err()
}
