package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/topolayer/topolayer/hack/bench/fleet"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	operators := flag.Int("operators", 10, "how many operators of the fleet to poll for")
	interval := flag.Duration("interval", 5*time.Second, "time between two reads of an input")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *operators, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "poller:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string, operators int, interval time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 1000, 1000 // the prototype's reads must not be throttled client-side
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for i := range operators {
			for _, k := range fleet.OperatorKinds(i) {
				for j := range fleet.ObjectsPerKind {
					_, err := dyn.Resource(fleet.Kinds[k].GVR).Namespace(fleet.Namespace).Get(ctx, fleet.ObjectName(j), metav1.GetOptions{})
					if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
						fmt.Fprintln(os.Stderr, "poller:", err)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
