package main

import (
	"os"

	"github.com/topolayer/topolayer/hack/bench/fleet"
	"github.com/topolayer/topolayer/sdk"
)

func main() {
	sdk.Main(func() (*sdk.Operator, error) { return fleet.Operator(os.Getenv("BENCH_OPERATOR")) })
}
