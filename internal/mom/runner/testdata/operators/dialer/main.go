// Command dialer tries to reach the network from apply-configuration: a TCP connection to
// DIAL_TCP (host:port) and an HTTP GET of DIAL_HTTP (a URL), each when set. It prints each
// outcome on stderr and exits 0 when every attempt connected, 7 when one failed.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	failed := false
	if addr := os.Getenv("DIAL_TCP"); addr != "" {
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err != nil {
			failed = true
			fmt.Fprintf(os.Stderr, "tcp %s: failed: %v\n", addr, err)
		} else {
			c.Close()
			fmt.Fprintf(os.Stderr, "tcp %s: connected\n", addr)
		}
	}
	if url := os.Getenv("DIAL_HTTP"); url != "" {
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
		if err != nil {
			failed = true
			fmt.Fprintf(os.Stderr, "http %s: failed: %v\n", url, err)
		} else {
			resp.Body.Close()
			fmt.Fprintf(os.Stderr, "http %s: connected: %s\n", url, resp.Status)
		}
	}
	if failed {
		os.Exit(7)
	}
}
