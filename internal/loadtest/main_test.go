package loadtest

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for turnpike-load: Run re-executes
// it with a hidden child subcommand, which must serve instead of testing.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && IsChildRole(os.Args[1]) {
		os.Exit(RunChild(os.Args[1], os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
