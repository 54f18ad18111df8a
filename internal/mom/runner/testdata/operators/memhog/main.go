// Command memhog allocates ALLOC bytes, touches every page, and reports it on stdout.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	n, _ := strconv.Atoi(os.Getenv("ALLOC"))
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	fmt.Printf("allocated %d bytes\n", len(b))
}
