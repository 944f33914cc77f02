//go:build !race

package oci_test

// raceEnabled: see race_test.go.
const raceEnabled = false
