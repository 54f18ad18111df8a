// Command envdump prints its environment on stdout, one VAR=value a line, sorted, and its
// working directory and ids on stderr.
package main

import (
	"fmt"
	"os"
	"slices"
)

func main() {
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		fmt.Println(kv)
	}
	wd, _ := os.Getwd()
	fmt.Fprintf(os.Stderr, "cwd=%s uid=%d gid=%d\n", wd, os.Getuid(), os.Getgid())
}
