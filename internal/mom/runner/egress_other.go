//go:build !linux

package runner

import (
	"fmt"
	"os"
)

// InitArg is the first argument that makes a program the sandbox's init (Linux only).
const InitArg = "__topolayer-sandbox-init"

// RunInit is the sandbox's init; it needs Linux.
func RunInit([]string) int {
	fmt.Fprintln(os.Stderr, "topolayer sandbox init: needs linux")
	return 125
}
