//go:build !plugkit_crashpoints || !unix

package install

// crashPoint marks a moment of a write at which the crash tests kill the
// process; it does nothing unless built with -tags plugkit_crashpoints.
func crashPoint(string) {}
