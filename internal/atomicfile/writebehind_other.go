//go:build !linux

package atomicfile

import "os"

// startWriteback does nothing here: the sync at Commit writes everything.
func startWriteback(*os.File, int64, int64) {}
