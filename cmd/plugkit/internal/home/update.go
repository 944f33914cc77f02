package home

import (
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/progress"
	"github.com/plugkit/plugkit/install"
)

// updateOptions are the flags of plugkit update.
type updateOptions struct {
	home   homeFlags
	update install.UpdateOptions
	yes    bool
}

// NewCmdUpdate builds plugkit update, which runs with fac.
func NewCmdUpdate(fac *factory.Factory) *cobra.Command {
	opts := &updateOptions{}
	cmd := &cobra.Command{
		Use:   "update [NAME...]",
		Short: "Update installed plugins from their sources, with consent to new launch surface",
		Long: `Update reads the source of each named installed plugin again (every plugin
when no NAME is given): a registry channel is resolved again, a directory or
archive read again. A plugin whose source now gives other content is
updated, and its data directory is kept.

The new launch surface is compared with the approved one in the lock: any
new or changed server, transport, command, args, cwd, env name or value,
URL, or header name or value needs consent again, with the difference
shown (on a terminal, or --yes in scripts; without it the exit status is 1
and nothing changes). Changes to skills or other files need no consent,
but the summary lists changed files under the paths of ./ commands;
--consent-on-code (or "consentOnCode": true in HOME/config.json) makes
those need consent too. Consent is all or nothing: one refusal and no
plugin updates. A plugin whose source cannot be read (or whose installed
tree is not what its lock entry records, lock-mismatch) fails on its own,
with its error code, and the others are updated (or, dry, reported). A
source recorded as plain HTTP (install --plain-http) is reached so again.

--dry-run shows what would change, writes nothing and exits 0.
--report reports each named plugin from a registry to it ("updated", or
"installed" when it was up to date), as plugkit install --report does: a
report that fails is a warning and leaves the exit status as it is.
Text prints one line per plugin, a failure as "NAME: failed (CODE): why".
--json prints {"plugins": [{"name", "outcome": "updated", "unchanged",
"failed" or "skipped" (not done: the update stopped as a whole), "change"
(versions, identities, "surface"), "error": {"code", "message"} (failed
only)}], "dryRun", "error": null or {"code", "message"}}, on failure too.

Exit status: 0 updated or up to date (even when a report failed), 1
refused or any plugin failed, 2 usage or I/O error.`,
		Example: `  plugkit update
  plugkit update kv --dry-run
  plugkit update kv --yes --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := opts.home.open(true)
			if err != nil {
				return err
			}
			opts.update.Consent = consentFunc(fac, cmd, opts.yes, opts.home.asJSON)
			bar := progress.Start(fac, cmd, "update", 0, false)
			opts.update.Progress = bar.Count
			res, err := h.Update(cmd.Context(), args, opts.update)
			bar.Done()
			if err := opts.home.finishOutcomes(cmd, res, consentHint(err, opts.update.Consent), opts.update.DryRun); err != nil || !opts.update.Report || opts.update.DryRun {
				return err
			}
			opts.home.warnReports(cmd, res)
			return nil
		},
	}
	opts.home.register(fac, cmd, true, true)
	cmd.Flags().BoolVar(&opts.yes, "yes", false, "consent to launch surface changes without asking")
	cmd.Flags().BoolVar(&opts.update.DryRun, "dry-run", false, "show what would change and write nothing")
	cmd.Flags().BoolVar(&opts.update.ConsentOnCode, "consent-on-code", false, "also ask consent for changed files under the paths of ./ commands")
	cmd.Flags().BoolVar(&opts.update.Report, "report", false, "report each plugin from a registry to it (POST /installations; a failed report is a warning)")
	return cmd
}
