package home

import (
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/progress"
	"github.com/plugkit/plugkit/install"
)

// syncOptions are the flags of plugkit sync.
type syncOptions struct {
	home homeFlags
	sync install.SyncOptions
}

// NewCmdSync builds plugkit sync, which runs with fac.
func NewCmdSync(fac *factory.Factory) *cobra.Command {
	opts := &syncOptions{}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Make the home match its lock file exactly",
		Long: `Sync makes the home match HOME/plugkit.lock, as npm ci does for packages:
every tree the lock names is fetched again by its recorded identity when
it is missing or modified (a registry artifact by its digest; a directory
or archive read again), and a source that now gives other bytes than the
recorded digest is refused. Trees the lock no longer names are removed,
and every plugin gets its data directory. Two homes with the same lock get
the same trees, byte for byte.

Sync needs no consent: the lock records what was approved. Copy a
reviewed plugkit.lock into a home and run sync to install exactly that.

Each plugin is synced on its own: one that fails (its source changed or
is unreachable, its tree holds another plugin or launch surface than its
lock entry) is reported with its error code, keeps its entry, and does not
stop the others, which are restored. A plugin whose fetched bytes would run
more than the lock records is never stored. Sync refuses to start when
the lock records a trust policy the home does not hold (policy-missing,
policy-mismatch), and warns when the home holds a policy the lock does not
record.

Text prints one line per plugin: "restored NAME VERSION", "NAME VERSION is
up to date" (its tree was checked), or "NAME: failed (CODE): why".
--json prints {"plugins": [{"name", "outcome": "restored", "unchanged" or
"failed", "change", "error": {"code", "message"} (failed only)}],
"warnings", "error": null or {"code", "message"}}, on failure too.

Exit status: 0 in sync, 1 any plugin failed or refused, 2 usage or I/O
error.`,
		Example: `  plugkit sync
  cp reviewed/plugkit.lock ~/.local/share/plugkit/ && plugkit sync --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := opts.home.open(true)
			if err != nil {
				return err
			}
			bar := progress.Start(fac, cmd, "sync", 0, false)
			opts.sync.Progress = bar.Count
			res, err := h.Sync(cmd.Context(), opts.sync)
			bar.Done()
			return opts.home.finishOutcomes(cmd, res, err, false)
		},
	}
	opts.home.register(fac, cmd, true, true)
	cmd.Flags().BoolVar(&opts.sync.KeepData, "keep-data", false, "keep data directories that another source created")
	return cmd
}
