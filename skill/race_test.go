//go:build race

package skill

// raceEnabled makes the long tests shorter under the race detector, which
// slows every memory access.
const raceEnabled = true
