package home

import (
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/install"
)

// removeOptions are the flags of plugkit remove.
type removeOptions struct {
	home   homeFlags
	remove install.RemoveOptions
}

// NewCmdRemove builds plugkit remove, which runs with fac.
func NewCmdRemove(fac *factory.Factory) *cobra.Command {
	opts := &removeOptions{}
	cmd := &cobra.Command{
		Use:   "remove NAME...",
		Short: "Remove installed plugins (their data stays unless --purge)",
		Long: `Remove uninstalls the named plugins: the lock file stops listing them, then
their trees are deleted from the store. Their data directories
(HOME/data/NAME) stay, so that installing the same plugin again from the
same source finds its data; --purge deletes them too, and also deletes the
data a plugin removed earlier left behind.

--json prints {"changes": [...]}.

Exit status: 0 removed, 1 not installed or refused, 2 usage or I/O error.`,
		Example: `  plugkit remove kv
  plugkit remove kv notes --purge --home ./.plugkit`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := opts.home.open(false)
			if err != nil {
				return err
			}
			res, err := h.Remove(cmd.Context(), args, opts.remove)
			return opts.home.finish(cmd, res, err, false)
		},
	}
	opts.home.register(fac, cmd, true, false)
	cmd.Flags().BoolVar(&opts.remove.Purge, "purge", false, "also delete the plugins' data directories")
	return cmd
}
