//go:build race

package archive_test

// raceEnabled tells the memory test that the race detector slows every
// memory access, so it uses smaller inputs (the same growth factor).
const raceEnabled = true
