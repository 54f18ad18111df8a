package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// The environments every test shares, started once by TestMain.
var (
	hosted     *cluster.Environment // management and guest, named by examples/hosted.yaml
	standalone *cluster.Environment // one cluster

	assetsDir     string                   // the kube-apiserver and etcd binaries
	hostedDataDir string                   // the hosted environment's etcd data and certificates
	startup       map[string]time.Duration // how long each environment took to start
)

// startTimeout bounds TestMain's setup, including a first build of the API server binaries.
const startTimeout = 30 * time.Minute

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// Managers started by the tests log through controller-runtime; errors are worth seeing
	// in a failed run, the rest is noise.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	// An interrupted or terminated test binary stops its API servers before it exits: they
	// run in process groups of their own, so the signal does not reach them.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	startCtx, cancelStart := context.WithTimeout(ctx, startTimeout)
	defer cancelStart()
	if err := setUp(startCtx); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: %v\n", err)
		return 1
	}
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			stopErr = errors.Join(hosted.Stop(), standalone.Stop(), stopOAuthEnvironments())
			if hostedDataDir != "" {
				stopErr = errors.Join(stopErr, os.RemoveAll(hostedDataDir))
			}
		})
		return stopErr
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			select {
			case <-done: // runMain returned, and its deferred cancel ended ctx
				return
			default:
			}
			fmt.Fprintln(os.Stderr, "e2e: interrupted: stopping the API servers")
			runInterruptCleanups()
			_ = stop()
			os.Exit(1)
		case <-done:
		}
	}()

	code := m.Run()
	removeBinaries()
	if err := stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stop the environments: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// setUp finds the API server binaries and the openshift/api CRDs, and starts the hosted and
// the standalone environment concurrently. On error nothing is left running.
func setUp(ctx context.Context) error {
	var err error
	// Once, before the environments: a first build takes minutes and prints its progress.
	if assetsDir, err = cluster.AssetsDir(ctx, os.Stderr); err != nil {
		return fmt.Errorf("%w\n(`make test` provides the binaries; or run: export %s=$(%s))", err, cluster.EnvAssets, cluster.AssetsScript)
	}
	cfg, err := config.Load(filepath.Join("..", "examples", "hosted.yaml"))
	if err != nil {
		return err
	}
	// The hosted environment keeps its data in a directory of its own, so that a test can
	// restart its API servers (RestartAPIServer needs the certificates to survive).
	if hostedDataDir, err = os.MkdirTemp("", "topolayer-e2e-hosted-"); err != nil {
		return err
	}
	hosted = &cluster.Environment{Topology: config.Hosted, TopologyConfig: cfg, AssetsDir: assetsDir, Progress: os.Stderr, DataDir: hostedDataDir}
	standalone = &cluster.Environment{Topology: config.Standalone, AssetsDir: assetsDir, Progress: os.Stderr}

	envs := map[string]*cluster.Environment{"hosted": hosted, "standalone": standalone}
	startup = map[string]time.Duration{}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for name, env := range envs {
		wg.Go(func() {
			start := time.Now()
			err := env.Start(ctx)
			mu.Lock()
			defer mu.Unlock()
			startup[name] = time.Since(start)
			if err != nil {
				errs = append(errs, fmt.Errorf("start the %s environment: %w", name, err))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return errors.Join(err, hosted.Stop(), standalone.Stop(), os.RemoveAll(hostedDataDir))
	}
	return nil
}

// interruptCleanups are what the running tests need done if the test binary is interrupted,
// when their own t.Cleanup functions will not run: stopping what outlives them.
var interruptCleanups struct {
	sync.Mutex
	funcs map[*testing.T]func()
}

// onInterrupt registers f to run if the test binary is interrupted while t runs.
func onInterrupt(t *testing.T, f func()) {
	interruptCleanups.Lock()
	defer interruptCleanups.Unlock()
	if interruptCleanups.funcs == nil {
		interruptCleanups.funcs = map[*testing.T]func(){}
	}
	interruptCleanups.funcs[t] = f
	t.Cleanup(func() {
		interruptCleanups.Lock()
		defer interruptCleanups.Unlock()
		delete(interruptCleanups.funcs, t)
	})
}

func runInterruptCleanups() {
	interruptCleanups.Lock()
	defer interruptCleanups.Unlock()
	for _, f := range interruptCleanups.funcs {
		f()
	}
}

// TestStartup reports how long TestMain took to start each environment (the two run
// concurrently, the hosted one's two servers too).
func TestStartup(t *testing.T) {
	for name, d := range startup {
		t.Logf("%s environment started in %s", name, d.Round(time.Millisecond))
	}
	t.Logf("assets: %s", assetsDir)
}
