package home

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/progress"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/source"
	"github.com/plugkit/plugkit/trust"
)

// installOptions are the flags of plugkit install.
type installOptions struct {
	home       homeFlags
	registry   string
	install    install.InstallOptions
	channel    string
	release    string
	policyFile string
	yes        bool
}

// NewCmdInstall builds plugkit install, which runs with fac.
func NewCmdInstall(fac *factory.Factory) *cobra.Command {
	opts := &installOptions{}
	cmd := &cobra.Command{
		Use:   "install SOURCE...",
		Short: "Install plugins into the home, with consent to what they may run",
		Long: `Install reads each SOURCE — a plugin directory, a .tar.gz archive, an
oci://REGISTRY/REPOSITORY[:TAG][@DIGEST] artifact, an
oci-layout:PATH[:TAG][@DIGEST] artifact, or a plugin id in the Backplane
registry given by --registry (or $PLUGKIT_REGISTRY) — refuses a rejected plugin or one with error diagnostics, shows what it will
be able to run (every MCP server's command, args, cwd, env names, URL and
header names), and asks for consent on a terminal. Without a terminal,
--yes is required; otherwise nothing is installed and the exit status is 1.

The trees go to HOME/store/sha256/ (read-only), the plugin's PLUGIN_DATA is
HOME/data/NAME (kept across updates and removals), and HOME/plugkit.lock
records what was installed, from where, with which digests, and the
approved launch surface. All sources install together or none does.

When the home has a trust policy (HOME/policy.json, stored by --policy
FILE), every plugin must satisfy it: the lock records the rule that
admitted each one, the signer, and the policy's sha256. A new --policy
replaces the home's, and every installed plugin must satisfy it too. No
flag skips the policy.

Installing a plugin of a name already installed from another source is
refused unless --replace; its data directory then starts empty unless
--keep-data. Installing again from the same source updates it (consent is
asked only if what it may run changes).

The home is --home, else $PLUGKIT_HOME, else $XDG_DATA_HOME/plugkit
(~/.local/share/plugkit). See docs/install.md.

--report reports each plugin installed from a registry to it (POST
/installations), after the installation is committed. A registry may take
reports only with a token (PLUGKIT_TOKEN or --token-file; a reader token
will do) unless it runs with --anonymous-reports. A report that fails does
not undo the installation and does not change the exit status: a warning on
stderr says why, and the change's "report" says "failed: ..." (or
"reported"). Running the same install again with --report sends it.

--json prints {"changes": [...]}: per plugin its action (install, replace,
update, none), the lock entry before and after, the launch surface,
whether it needed consent, and the report's outcome.

Exit status: 0 installed (even when a report failed), 1 refused (consent,
conflict, invalid plugin, another writer busy), 2 usage or I/O error.`,
		Example: `  plugkit install ./my-plugin
  plugkit install my-plugin-1.0.0.tar.gz --yes --home ./.plugkit
  plugkit install release-notes --registry http://127.0.0.1:8080 --channel beta
  plugkit install release-notes --registry https://plugins.example.com --token-file ~/.config/plugkit/token --report
  plugkit install oci://127.0.0.1:5000/plugins/kv:1.0.0 --plain-http
  plugkit install oci-layout:./airgap.tar@sha256:3f1c...e9 --yes
  plugkit install ./other/kv --replace --keep-data --yes
  plugkit install oci://registry.example.com/acme/kv:1 --policy team-policy.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var srcs []source.Source
			for _, a := range args {
				src, err := source.Parse(a, source.ParseOptions{Registry: opts.registry, Channel: opts.channel, Release: opts.release})
				if err != nil {
					return command.Usage(err)
				}
				srcs = append(srcs, src)
			}
			if opts.channel != "" && opts.release != "" {
				return command.Usagef("--channel and --release exclude each other")
			}
			h, err := opts.home.open(true)
			if err != nil {
				return err
			}
			if opts.policyFile != "" {
				if opts.install.Policy, err = trust.LoadPolicy(opts.policyFile); err != nil {
					return command.WithCode(command.CodePolicyInvalid, command.Usage(err))
				}
			}
			opts.install.Consent = consentFunc(fac, cmd, opts.yes, opts.home.asJSON)
			bar := progress.Start(fac, cmd, "install", int64(len(srcs)), false)
			opts.install.Progress = bar.Count
			res, err := h.Install(cmd.Context(), srcs, opts.install)
			bar.Done()
			if err := opts.home.finish(cmd, res, consentHint(err, opts.install.Consent), false); err != nil || !opts.install.Report {
				return err
			}
			opts.home.warnReports(cmd, res)
			return nil
		},
	}
	opts.home.register(fac, cmd, true, true)
	cmd.Flags().StringVar(&opts.registry, "registry", os.Getenv("PLUGKIT_REGISTRY"), "Backplane registry base URL for plugin ids (default $PLUGKIT_REGISTRY)")
	cmd.Flags().StringVar(&opts.channel, "channel", "", "registry channel to install from (default stable)")
	cmd.Flags().StringVar(&opts.release, "release", "", "registry release ID to install instead of a channel")
	cmd.Flags().BoolVar(&opts.yes, "yes", false, "consent to what the plugins may run without asking")
	cmd.Flags().BoolVar(&opts.install.Replace, "replace", false, "replace a plugin of the same name installed from another source")
	cmd.Flags().BoolVar(&opts.install.KeepData, "keep-data", false, "keep a data directory that another source created")
	cmd.Flags().BoolVar(&opts.install.Report, "report", false, "report each plugin installed from a registry to it (POST /installations; a failed report is a warning)")
	cmd.Flags().StringVar(&opts.policyFile, "policy", "", "trust policy (JSON or YAML, docs/trust.md) to store in the home and apply from now on")
	return cmd
}

// consentHint says how to give consent when there was no one to ask.
func consentHint(err error, consent install.ConsentFunc) error {
	if errors.Is(err, install.ErrConsent) && consent == nil {
		return fmt.Errorf("%w (no terminal to ask: review the changes above and pass --yes to consent)", err)
	}
	return err
}

// finish prints the result of a writer verb, or fails with its error. On
// a refusal the changes are still shown in text, so that the user sees
// what needed consent.
func (f *homeFlags) finish(cmd *cobra.Command, res *install.Result, err error, dry bool) error {
	if err != nil {
		if res != nil && !f.asJSON {
			printChanges(cmd.OutOrStdout(), res, true)
		}
		return Error(err)
	}
	return command.Output(cmd, f.asJSON, res, func(w io.Writer) { printChanges(w, res, dry) })
}

// warnReports says on stderr, for each report to a registry that failed,
// why and what to do, and that nothing was reported when no plugin came
// from a registry. The change itself was committed: the exit status stays
// 0, and --json carries a failure in the change's "report".
func (f *homeFlags) warnReports(cmd *cobra.Command, res *install.Result) {
	reported := false
	for _, c := range res.Changes {
		reported = reported || c.Report != ""
		if c.ReportErr == nil {
			continue
		}
		why := c.ReportErr.Error()
		var se *distribution.StatusError
		if errors.As(c.ReportErr, &se) {
			cl := *f.client
			cl.BaseURL = c.New.Source.Registry
			why = f.registry.ExplainStatus(cmd.Context(), &cl, remote.Request{Action: "report installations", Role: "reader", PluginID: c.New.Source.Plugin}, se)
		}
		command.Printf(cmd.ErrOrStderr(), "plugkit: warning: %s %s is installed, but reporting it to %s failed: %s; "+
			"the installation stands: run the command again with --report to send the report\n", c.Name, c.New.Version, c.New.Source.Registry, why)
	}
	if !reported && len(res.Changes) > 0 {
		command.Printf(cmd.ErrOrStderr(), "plugkit: warning: --report: no plugin here comes from a Backplane registry, so nothing was reported\n")
	}
}
