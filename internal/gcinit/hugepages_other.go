//go:build !linux

package gcinit

// askHugePages does nothing: transparent huge pages are Linux's.
func askHugePages() {}
