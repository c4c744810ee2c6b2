// Command turnpike-load benchmarks the gateway against a bare reverse proxy
// on loopback; see docs/PERFORMANCE.md.
package main

import (
	"os"

	"github.com/turnpike-gw/turnpike/internal/loadtest"
)

func main() {
	os.Exit(loadtest.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
