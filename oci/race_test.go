//go:build race

package oci_test

// raceEnabled tells the cost tests that the race detector slows every
// memory access, so they use smaller inputs (the same growth factor).
const raceEnabled = true
