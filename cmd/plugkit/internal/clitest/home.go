package clitest

import (
	"testing"

	"github.com/plugkit/plugkit/install"
)

// MustHome opens the plugin home dir, failing the test if it cannot.
func MustHome(t testing.TB, dir string) *install.Home {
	t.Helper()
	h, err := install.Open(dir, install.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
