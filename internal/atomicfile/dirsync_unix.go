//go:build unix

package atomicfile

func isDirSyncUnsupported(error) bool { return false }
