// Command turnpike is the Turnpike AI model gateway.
package main

import (
	"os"
	"runtime"

	"github.com/turnpike-gw/turnpike/internal/cli"
)

func main() {
	// The gateway serves no heap profile, so sampling allocations for one
	// would only cost memory (the profile's bucket table, 1.5 MB) and time.
	runtime.MemProfileRate = 0
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
