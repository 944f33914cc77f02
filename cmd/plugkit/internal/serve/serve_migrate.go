package serve

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/registry/storage"
)

// serveMigrateOptions are the flags of plugkit serve migrate.
type serveMigrateOptions struct {
	storage storageFlags
	asJSON  bool
}

func newServeMigrateCmd() *cobra.Command {
	opts := &serveMigrateOptions{}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring the registry's database schema up to date, and nothing else",
		Long: `Migrate applies the schema migrations the database has not seen and exits.
plugkit serve applies them at start too; run this first to upgrade
separately, for example before rolling out a new plugkit over replicas.
PostgreSQL migrations run under an advisory lock, so concurrent runs and
starting replicas apply each migration once. A database of a newer schema
than this plugkit knows is refused untouched. SQLite (--data) is upgraded in
place; a --data without a registry is refused (exit 2), not created. With
--json: {"migrations": [{"version", "applied"}]} (empty for SQLite).

Exit status: 0 up to date, 1 the database refused or is of a newer schema,
2 usage error or no registry in --data.`,
		Example: `  plugkit serve migrate --data ./registry
  PLUGKIT_DATABASE_URL=postgres://plugkit:…@db/plugkit plugkit serve migrate --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := opts.storage.config(cmd)
			if err != nil {
				return err
			}
			cfg.OpenExisting = true
			ms, err := storage.Migrate(cmd.Context(), cfg)
			if errors.Is(err, storage.ErrNoRegistry) {
				return storageError(err)
			} else if err != nil {
				return command.Failed(err)
			}
			return command.Output(cmd, opts.asJSON, map[string]any{"migrations": ms}, func(w io.Writer) {
				applied := 0
				for _, m := range ms {
					if m.Applied {
						applied++
						fmt.Fprintf(w, "applied migration %d\n", m.Version)
					}
				}
				fmt.Fprintf(w, "schema up to date (%s applied now)\n", command.Plural(applied, "migration"))
			})
		},
	}
	opts.storage.register(cmd, false)
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}
