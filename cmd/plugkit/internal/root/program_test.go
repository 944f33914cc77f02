package root

import (
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
)

// plugkit runs plugkit in process: every verb.
func plugkit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(t, Program().Run, args...)
}
