package main

import (
	"github.com/topolayer/topolayer/sdk"
	"github.com/topolayer/topolayer/sdk/samples/sampleaudit"
)

func main() { sdk.Main(sampleaudit.New) }
