//go:build race

package trust

// raceEnabled shrinks the hostile-size tests under the race detector,
// which makes each byte some ten times dearer; the growth they check is
// the same.
const raceEnabled = true
