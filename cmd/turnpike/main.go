// Command turnpike is the Turnpike AI model gateway.
package main

import (
	"os"

	"github.com/turnpike-gw/turnpike/internal/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}
