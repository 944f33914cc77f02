package home

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/source"
	"github.com/plugkit/plugkit/trust"
)

// homeFlags are the flags of the verbs that work on a plugin home.
type homeFlags struct {
	fac         *factory.Factory
	dir         string
	asJSON      bool
	lockTimeout time.Duration
	// For the verbs that read sources: how to reach registries.
	registry remote.RegistryFlags
	oci      remote.OCIFlags
	// client is the Backplane client template open made (its token), nil
	// for the verbs that read no source.
	client *distribution.Client
}

// register adds --home and --json; writers also get --lock-timeout, and
// the verbs that read sources --token-file and --plain-http.
func (f *homeFlags) register(fac *factory.Factory, cmd *cobra.Command, writer, fetch bool) {
	f.fac = fac
	cmd.Flags().StringVar(&f.dir, "home", "", "plugin home (default $PLUGKIT_HOME, else $XDG_DATA_HOME/plugkit, else ~/.local/share/plugkit)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print one JSON document")
	if writer {
		cmd.Flags().DurationVar(&f.lockTimeout, "lock-timeout", install.DefaultLockTimeout, "how long to wait while another plugkit changes the home (0: do not wait)")
	}
	if fetch {
		cmd.Flags().StringVar(&f.registry.TokenFile, "token-file", "", "file holding the Backplane registry token (default $PLUGKIT_TOKEN)")
		cmd.Flags().BoolVar(&f.oci.PlainHTTP, "plain-http", false, "reach oci:// registries over HTTP instead of HTTPS (a local or test registry)")
	}
}

// Open opens the plugin home dir (fac's default home when dir is "") to
// read it, as the verbs that run its plugins do.
func Open(fac *factory.Factory, dir string) (*install.Home, error) {
	return (&homeFlags{fac: fac, dir: dir}).open(false)
}

// open opens the home the flags name. With fetch, plugins are read with
// the registry token (PLUGKIT_TOKEN or --token-file; each source sets the
// URL) and the OCI registry options (--plain-http, Docker credentials).
func (f *homeFlags) open(fetch bool) (*install.Home, error) {
	dir, err := f.fac.Home(f.dir)
	if err != nil {
		return nil, command.Usage(err)
	}
	var src source.Options
	if fetch {
		token, err := f.registry.Token()
		if err != nil {
			return nil, err
		}
		f.client = &distribution.Client{Token: token}
		src.Client = f.client
		if src.Remote, err = f.oci.Remote(); err != nil {
			return nil, err
		}
	}
	timeout := f.lockTimeout
	if timeout == 0 {
		timeout = -1 // --lock-timeout 0: do not wait
	}
	h, err := install.Open(dir, install.Options{Source: src, LockTimeout: timeout})
	if err != nil {
		return nil, command.Usage(err)
	}
	return h, nil
}

// Error gives an error of package install its exit code and --json
// code.
func Error(err error) error {
	if err == nil {
		return nil
	}
	var inv *install.InvalidError
	var pe *trust.PolicyError
	switch {
	case errors.As(err, &inv):
		return command.WithDiagnostics(command.WithCode(command.CodeInvalid, command.Failed(err)), inv.Diagnostics)
	case errors.Is(err, install.ErrConsent):
		return command.WithCode(command.CodeConsent, command.Failed(err))
	case errors.Is(err, install.ErrConflict):
		return command.WithCode(command.CodeConflict, command.Failed(err))
	case errors.Is(err, install.ErrNotInstalled):
		return command.WithCode(command.CodeNotInstalled, command.Failed(err))
	case errors.Is(err, install.ErrBusy):
		return command.WithCode(command.CodeBusy, command.Failed(err))
	case errors.Is(err, install.ErrSourceChanged):
		return command.WithCode(command.CodeSourceChanged, command.Failed(err))
	case errors.Is(err, install.ErrModified):
		return command.WithCode(command.CodeModified, command.Failed(err))
	case errors.Is(err, install.ErrLockInvalid):
		return command.WithCode(command.CodeLockInvalid, command.Failed(err))
	case errors.Is(err, install.ErrLockMismatch):
		return command.WithCode(command.CodeLockMismatch, command.Failed(err))
	case errors.Is(err, install.ErrPolicyMismatch):
		return command.WithCode(command.CodePolicyMismatch, command.Failed(err))
	case errors.Is(err, install.ErrPolicyMissing):
		return command.WithCode(command.CodePolicyMissing, command.Failed(err))
	case errors.As(err, &pe):
		return command.WithCode(command.CodePolicyInvalid, command.Usage(err))
	case remote.PlainHTTPHint(err) != nil:
		return remote.PlainHTTPHint(err)
	case errors.Is(err, trust.ErrRefused):
		return command.Failed(err)
	case errors.Is(err, source.ErrSyntax):
		return command.Usage(err)
	case errors.Is(err, context.Canceled):
		return command.Failed(err)
	}
	if _, rejected := agentplugin.Diagnostics(err); rejected || input.IsInputError(err) {
		return command.Failed(err)
	}
	var ee *command.ExitError
	if errors.As(err, &ee) {
		return err
	}
	if command.IsIOError(err) {
		return command.Usage(err)
	}
	return command.Failed(err)
}

// consentFunc is how a writer verb gets consent: --yes gives it, a
// terminal asks for it on stderr, and anything else has no one to ask (the
// operation then fails with ErrConsent, changing nothing).
func consentFunc(fac *factory.Factory, cmd *cobra.Command, yes, asJSON bool) install.ConsentFunc {
	ask := asker(fac, cmd, yes, asJSON)
	if ask == nil {
		return nil
	}
	return func(ctx context.Context, c *install.Change) (bool, error) {
		return ask(ctx, func(w io.Writer) { printConsent(w, c) }, fmt.Sprintf("%s %s?", verbWord(c.Action), safe(c.Name)))
	}
}

// askFunc shows what needs consent, asks question and says whether the
// answer was yes.
type askFunc func(ctx context.Context, show func(io.Writer), question string) (bool, error)

// asker is how a verb asks for consent: always yes with --yes, on the
// terminal on stderr, and nil when there is no one to ask.
func asker(fac *factory.Factory, cmd *cobra.Command, yes, asJSON bool) askFunc {
	if yes {
		return func(context.Context, func(io.Writer), string) (bool, error) { return true, nil }
	}
	if asJSON || !fac.InTerminal {
		return nil
	}
	in := bufio.NewReader(cmd.InOrStdin())
	return func(ctx context.Context, show func(io.Writer), question string) (bool, error) {
		w := cmd.ErrOrStderr()
		show(w)
		fmt.Fprintf(w, "%s [y/N] ", question)
		answer := make(chan string, 1)
		go func() {
			line, _ := in.ReadString('\n')
			answer <- strings.ToLower(strings.TrimSpace(line))
		}()
		select {
		case a := <-answer:
			return a == "y" || a == "yes", nil
		case <-ctx.Done():
			fmt.Fprintln(w)
			return false, ctx.Err()
		}
	}
}

func verbWord(a install.Action) string {
	switch a {
	case install.ActionUpdate:
		return "Update"
	case install.ActionReplace:
		return "Replace"
	}
	return "Install"
}

// printConsent shows what a change lets the plugin run: the whole launch
// surface of a new plugin, or what an update adds and changes.
func printConsent(w io.Writer, c *install.Change) {
	switch c.Action {
	case install.ActionUpdate:
		fmt.Fprintf(w, "%s %s -> %s (%s) changes what it may run:\n", safe(c.Name), safe(c.Old.Version), safe(c.New.Version), safe(c.New.Source.String()))
		printSurfaceChanges(w, c)
	default:
		fmt.Fprintf(w, "%s %s from %s\n", safe(c.Name), safe(c.New.Version), safe(c.New.Source.String()))
		if c.Action == install.ActionReplace {
			fmt.Fprintf(w, "  replaces %s %s from %s\n", safe(c.Name), safe(c.Old.Version), safe(c.Old.Source.String()))
		}
		printSurface(w, c.New.Servers, "  ")
	}
	printCode(w, c)
	printData(w, c)
}

// printSurface lists servers with everything that decides what runs.
func printSurface(w io.Writer, servers []install.Server, indent string) {
	if len(servers) == 0 {
		fmt.Fprintf(w, "%sruns nothing: no MCP servers\n", indent)
		return
	}
	fmt.Fprintf(w, "%swill be able to run:\n", indent)
	for _, s := range servers {
		printServer(w, s, indent+"  ")
	}
}

// printServer shows one server as consent shows it: the command line (or
// URL), cwd, and the names of env variables (or headers).
func printServer(w io.Writer, s install.Server, indent string) {
	if s.Transport == "stdio" {
		line := s.Command
		for _, a := range s.Args {
			line += " " + quoteIfNeeded(a)
		}
		fmt.Fprintf(w, "%s%s (stdio): %s\n", indent, safe(s.Name), safe(line))
		if s.Cwd != "" {
			fmt.Fprintf(w, "%s  cwd %s\n", indent, safe(s.Cwd))
		}
		if len(s.Env) > 0 {
			fmt.Fprintf(w, "%s  env %s\n", indent, safe(strings.Join(slices.Sorted(maps.Keys(s.Env)), " ")))
		}
		return
	}
	fmt.Fprintf(w, "%s%s (%s): %s\n", indent, safe(s.Name), safe(s.Transport), safe(s.URL))
	if len(s.Headers) > 0 {
		fmt.Fprintf(w, "%s  headers %s\n", indent, safe(strings.Join(slices.Sorted(maps.Keys(s.Headers)), " ")))
	}
}

// printSurfaceChanges lists what an update changes in the launch surface:
// an added server with everything install would show of it, a changed
// field with its old and new value.
func printSurfaceChanges(w io.Writer, c *install.Change) {
	for _, sc := range c.Surface {
		fmt.Fprintf(w, "  %s\n", safe(sc.String()))
		if sc.Kind != "added" {
			continue
		}
		for _, s := range c.New.Servers {
			if s.Name == sc.Server {
				printServer(w, s, "    ")
			}
		}
	}
}

func printCode(w io.Writer, c *install.Change) {
	if len(c.CodeFiles) == 0 {
		return
	}
	fmt.Fprintf(w, "  code changed under ./ commands: %s\n", safe(strings.Join(c.CodeFiles, " ")))
}

func printData(w io.Writer, c *install.Change) {
	switch {
	case c.DataReset:
		fmt.Fprintf(w, "  its data directory was created by %s and starts empty (--keep-data keeps it)\n", safe(c.DataFrom.String()))
	case c.DataFrom != nil:
		fmt.Fprintf(w, "  keeps the data directory created by %s\n", safe(c.DataFrom.String()))
	}
}

// printChanges prints what an operation did (or, dry, would do).
func printChanges(w io.Writer, res *install.Result, dry bool) {
	if len(res.Changes) == 0 {
		fmt.Fprintln(w, "nothing to do")
	}
	for _, c := range res.Changes {
		printChange(w, c, dry)
	}
}

func printChange(w io.Writer, c *install.Change, dry bool) {
	would := func(done, doing string) string {
		if dry {
			return "would " + doing
		}
		return done
	}
	short := func(e *install.Entry) string { return shortDigest(e.Identity) }
	switch c.Action {
	case install.ActionNone:
		if c.DataPurged {
			fmt.Fprintf(w, "%s was not installed; %s\n", safe(c.Name), would("its data directory was deleted", "delete its data directory"))
			return
		}
		fmt.Fprintf(w, "%s %s is up to date (%s)\n", safe(c.Name), safe(c.Old.Version), short(c.Old))
	case install.ActionInstall, install.ActionReplace:
		done := map[install.Action]string{install.ActionInstall: "installed", install.ActionReplace: "replaced"}[c.Action]
		fmt.Fprintf(w, "%s %s %s from %s (%s)\n", would(done, string(c.Action)), safe(c.Name), safe(c.New.Version), safe(c.New.Source.String()), short(c.New))
		printSurface(w, c.New.Servers, "  ")
	case install.ActionUpdate:
		fmt.Fprintf(w, "%s %s %s -> %s (%s -> %s)\n", would("updated", "update"), safe(c.Name), safe(c.Old.Version), safe(c.New.Version), short(c.Old), short(c.New))
		printSurfaceChanges(w, c)
		if c.NeedsConsent && dry {
			fmt.Fprintln(w, "  needs consent: its launch surface changes")
		}
	case install.ActionRemove:
		fmt.Fprintf(w, "%s %s %s\n", would("removed", "remove"), safe(c.Name), safe(c.Old.Version))
		if c.DataPurged {
			fmt.Fprintf(w, "  %s\n", would("its data directory was deleted", "delete its data directory"))
		} else {
			fmt.Fprintln(w, "  its data directory is kept (--purge deletes it)")
		}
	case install.ActionRestore:
		fmt.Fprintf(w, "restored %s %s (%s)\n", safe(c.Name), safe(c.New.Version), short(c.New))
	}
	if c.New != nil && c.New.Trust != nil && c.Action != install.ActionNone {
		fmt.Fprintf(w, "  admitted by %s%s\n", safe(c.New.Trust.Rule), signedBy(c.New.Trust))
	}
	if c.Refused != "" {
		fmt.Fprintf(w, "  refused by the trust policy: %s\n", safe(c.Refused))
	}
	for _, d := range c.Warnings {
		fmt.Fprintf(w, "  %s\n", safe(d.String()))
	}
	printCode(w, c)
	printData(w, c)
	if c.Report != "" {
		fmt.Fprintf(w, "  report to the registry: %s\n", safe(c.Report))
	}
}

// shortDigest is a digest cut to 12 hex digits for text output.
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

// safe is terminal.Safe: every plugin-supplied string printed as text
// passes through it.
func safe(s string) string { return terminal.Safe(s) }

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"'\\") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

func signedBy(t *install.Trust) string {
	if t.Signer == "" {
		return ""
	}
	return ", signed by " + safe(t.Signer)
}
