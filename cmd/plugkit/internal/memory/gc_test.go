package memory

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestGCPercent(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	restore := GCPercent(400)
	if got := debug.SetGCPercent(400); got != 400 {
		t.Fatalf("during the verb GOGC is %d, want 400", got)
	}
	restore()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("after the verb GOGC is %d, want 150 back", got)
	}
	t.Setenv("GOGC", "150")
	GCPercent(400)()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("with GOGC set, the verb changed it to %d", got)
	}
}

func TestGCOff(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	restore := GCOff(64 << 20)
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("during the verb GOGC is %d, want off", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 64<<20 {
		t.Fatalf("during the verb the memory limit is %d, want %d", got, 64<<20)
	}
	restore()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Fatalf("after the verb GOGC is %d, want 150 back", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("after the verb the memory limit is %d, want none", got)
	}
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "100")
			GCOff(64 << 20)()
			if got := debug.SetGCPercent(150); got != 150 {
				t.Fatalf("with %s set, the verb changed GOGC to %d", env, got)
			}
			if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
				t.Fatalf("with %s set, the verb set a memory limit of %d", env, got)
			}
		})
	}
}
