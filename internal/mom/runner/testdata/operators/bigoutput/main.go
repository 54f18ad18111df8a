// Command bigoutput writes SIZE bytes into its output directory in files of at most 1 MiB and
// exits, or with FOREVER=1 keeps writing a 1 MiB file every 10ms until it is stopped.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	fs := flag.NewFlagSet("apply-configuration", flag.ExitOnError)
	out := fs.String("output-dir", "", "")
	fs.String("input-dir", "", "")
	_ = fs.Parse(os.Args[2:])
	size, _ := strconv.ParseInt(os.Getenv("SIZE"), 10, 64)
	forever := os.Getenv("FOREVER") == "1"
	chunk := make([]byte, 1<<20)
	for i := 0; forever || size > 0; i++ {
		n := min(int64(len(chunk)), size)
		if forever {
			n = int64(len(chunk))
			time.Sleep(10 * time.Millisecond)
		}
		if err := os.WriteFile(filepath.Join(*out, fmt.Sprintf("blob-%d", i)), chunk[:n], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		size -= n
	}
}
