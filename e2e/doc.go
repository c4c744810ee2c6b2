// Package e2e holds the browser tests of the web console: they start the
// real gateway in-process with a fake upstream, drive headless Chromium over
// the DevTools protocol, and optionally write docs/screenshots.
//
// Run them with `go test ./e2e/` (skipped without Chromium; TURNPIKE_E2E=1
// makes a missing browser a failure) and refresh the screenshots with
// `TURNPIKE_SCREENSHOTS=1 go test ./e2e/`.
package e2e
