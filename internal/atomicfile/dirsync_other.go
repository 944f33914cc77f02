//go:build !unix

package atomicfile

// isDirSyncUnsupported: Windows cannot open a directory for syncing the
// way Unix can; a rename there is made durable by the file system itself.
func isDirSyncUnsupported(err error) bool { return err != nil }
