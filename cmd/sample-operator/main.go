package main

import (
	"os"

	"github.com/topolayer/topolayer/sdk"
	"github.com/topolayer/topolayer/sdk/samples/sample"
)

func main() {
	sdk.Main(func() (*sdk.Operator, error) { return sample.New(os.Getenv("SAMPLE_IMAGE")) })
}
