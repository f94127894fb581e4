//go:build race

package conformance

// raceEnabled builds mcphost's client with the race detector when the test
// itself runs with it.
const raceEnabled = true
