// Package root is plugkit as one program: the explicit list of its verbs,
// group by group, and Main, which runs a command line on the process's
// streams until it ends or a signal stops it.
package root

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/build"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/home"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/ocicmd"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/registrycmd"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/run"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/serve"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/signcmd"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/version"
)

// Program is plugkit's command line: every verb, and --version.
func Program() command.Program {
	return command.Program{
		Verbs: command.Join(build.Verbs(), ocicmd.Verbs(), registrycmd.Verbs(), home.Verbs(), run.Verbs(),
			signcmd.Verbs(), serve.Verbs(), version.Verbs()),
		VersionText: func() string { return version.Build().Text() },
	}
}

// Main runs plugkit with the process's arguments and streams and exits
// with its exit code.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks the verb to stop cleanly; restoring the
		// default action lets a second one end plugkit at once, should the
		// verb be slow to notice.
		<-ctx.Done()
		stop()
	}()
	code := Program().RunContext(ctx, factory.New(), os.Args[1:])
	stop()
	os.Exit(code)
}
