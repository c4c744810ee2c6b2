package testkit

import "time"

// WaitFor calls cond every interval until it returns true or timeout has
// passed, and reports whether it did. cond always runs at least once, and
// once more after the deadline is seen, so a slow machine that overshoots
// the deadline still gets a last look. Callers keep what cond saw in their
// own variables to describe a timeout.
func WaitFor(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}
