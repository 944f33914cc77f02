package main

import (
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/internal/cli"
)

func init() { cli.Register(newSyncCmd) }

func newSyncCmd() *cobra.Command {
	var hf homeFlags
	var opts install.SyncOptions
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

--json prints {"changes": [...]}: "restore" for each tree written, "none"
for each tree already intact.

Exit status: 0 in sync, 1 refused (a source changed, a fetch failed),
2 usage or I/O error.`,
		Example: `  plugkit sync
  cp reviewed/plugkit.lock ~/.local/share/plugkit/ && plugkit sync --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := hf.open(true)
			if err != nil {
				return err
			}
			bar := cli.StartProgress(cmd, "sync", 0, false)
			opts.Progress = bar.Count
			res, err := h.Sync(cmd.Context(), opts)
			bar.Done()
			return hf.finish(cmd, res, err, false)
		},
	}
	hf.register(cmd, true, true)
	cmd.Flags().BoolVar(&opts.KeepData, "keep-data", false, "keep data directories that another source created")
	return cmd
}
