package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/topolayer/topolayer/internal/samples/sample"
)

func main() {
	once := flag.Bool("once", false, "apply the status ConfigMap once and exit")
	interval := flag.Duration("interval", time.Minute, "how often to apply it again")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *once, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		stop()
		os.Exit(1)
	}
}

// run applies the status ConfigMap, then again every interval until ctx is done.
func run(ctx context.Context, once bool, interval time.Duration) error {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return fmt.Errorf("client configuration: %w", err)
	}
	namespace, _, err := loader.Namespace()
	if err != nil {
		return fmt.Errorf("namespace: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	status := coreac.ConfigMap(sample.OperandStatusName, namespace).WithData(map[string]string{
		"message": os.Getenv("MESSAGE"),
		"writer":  host,
	})
	for {
		if _, err := cs.CoreV1().ConfigMaps(namespace).Apply(ctx, status, metav1.ApplyOptions{FieldManager: "sample-operand", Force: true}); err != nil {
			return fmt.Errorf("apply configmap %s/%s on %s: %w", namespace, sample.OperandStatusName, cfg.Host, err)
		}
		fmt.Printf("applied configmap %s/%s on %s\n", namespace, sample.OperandStatusName, cfg.Host)
		if once {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}
