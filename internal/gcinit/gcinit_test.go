package gcinit

import (
	"runtime/debug"
	"testing"
)

// TestRestore: the collector is off from this package's initialisation
// until Restore, which gives back the setting it had (GOGC's).
func TestRestore(t *testing.T) {
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("before Restore the collector is at %d%%, want off", got)
	}
	Restore()
	if got := debug.SetGCPercent(percent); got != percent || percent == -1 {
		t.Fatalf("after Restore the collector is at %d%%, want %d%%", got, percent)
	}
}
