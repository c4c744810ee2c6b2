//go:build race

package relay

// raceDetector is on: it makes sync.Pool drop what is put back at random
// and instruments allocations, so allocation counts are not a release
// build's.
const raceDetector = true
