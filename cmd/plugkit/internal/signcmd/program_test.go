package signcmd

import (
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/build"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/home"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/ocicmd"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/registrycmd"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/run"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/serve"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/version"
)

// program is plugkit with the verbs these tests run: this package's and
// those of the groups that do not import it.
func program() command.Program {
	return command.Program{
		Verbs:       command.Join(build.Verbs(), ocicmd.Verbs(), registrycmd.Verbs(), home.Verbs(), run.Verbs(), Verbs(), serve.Verbs(), version.Verbs()),
		VersionText: func() string { return version.Build().Text() },
	}
}

// runCLI runs plugkit in process.
func runCLI(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(t, program().Run, args...)
}

// mustRun runs plugkit in process and fails the test unless it exits 0.
func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	return clitest.MustRun(t, program().Run, args...)
}
