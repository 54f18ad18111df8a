package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/topolayer/topolayer/hack/bench/fleet"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	op, err := fleet.Operator(os.Getenv("BENCH_OPERATOR"))
	if err == nil {
		err = op.Command().ExecuteContext(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchop:", err)
		stop()
		os.Exit(1)
	}
}
