package main

import (
	"os"
	"testing"

	"github.com/topolayer/topolayer/internal/mom/runner"
)

func TestMain(m *testing.M) {
	// An operator run with egress (runner.Exec.Egress) starts this test binary again as
	// its sandbox's init.
	if len(os.Args) > 1 && os.Args[1] == runner.InitArg {
		os.Exit(runner.RunInit(os.Args[2:]))
	}
	os.Exit(m.Run())
}
