//go:build race

package loadtest

// raceDetector is on: its instrumentation enlarges every frame, so stack
// depths are not the ones a release build has.
const raceDetector = true
