package main

import (
	"os"

	"github.com/topolayer/topolayer/internal/samples/sample"
	"github.com/topolayer/topolayer/sdk"
)

func main() {
	sdk.Main(func() (*sdk.Operator, error) { return sample.New(os.Getenv("SAMPLE_IMAGE")) })
}
