//go:build race

package install

// raceEnabled: the race detector slows parsing about tenfold, so the cost
// test grows its input 4 times instead of 16 (a quadratic cost still shows
// as 16 times the time against 4).
const raceEnabled = true
