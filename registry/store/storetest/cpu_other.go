//go:build !unix

package storetest

import "time"

// processCPU is not known here.
func processCPU() (time.Duration, bool) { return 0, false }
