package main

import (
	"github.com/topolayer/topolayer/internal/samples/sampleaudit"
	"github.com/topolayer/topolayer/sdk"
)

func main() { sdk.Main(sampleaudit.New) }
