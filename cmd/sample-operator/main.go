package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/topolayer/topolayer/sdk/samples/sample"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	op, err := sample.New(os.Getenv("SAMPLE_IMAGE"))
	if err == nil {
		err = op.Command().ExecuteContext(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		stop()
		os.Exit(1)
	}
}
