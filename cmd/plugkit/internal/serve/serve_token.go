package serve

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/internal/terminal"
	"github.com/plugkit/plugkit/registry"
	"github.com/plugkit/plugkit/registry/storage"
	"github.com/plugkit/plugkit/registry/store"
)

func newServeTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Add, list and revoke the tokens kept in the registry's database",
		Long: `Token manages the tokens kept in the registry's database, beside those of
the environment ($PLUGKIT_PUBLISH_TOKENS, …). Only a token's SHA-256 is
stored: add prints the token once. A token's identity, which owns the plugins
it publishes first, is its ID. Revocation reaches every replica within a
second. Point these commands at the server's storage with --data (SQLite) or
--database / $PLUGKIT_DATABASE_URL (PostgreSQL). add creates the registry
when there is none; list and revoke refuse a --data that holds none (exit
2) and create nothing.

Exit status: 0 done, 1 refused (an unknown token, the database refused),
2 usage or I/O error, or no registry there (list, revoke).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return command.Usage(errors.New("token needs a subcommand: add, list or revoke"))
		},
	}
	cmd.AddCommand(newTokenAddCmd(), newTokenListCmd(), newTokenRevokeCmd())
	return cmd
}

// withTokens opens the storage of f and runs fn on its token store. Only
// add may create the registry (existing false): list and revoke of a
// registry that is not there are refused.
func withTokens(cmd *cobra.Command, f *storageFlags, existing bool, fn func(store.Tokens) error) error {
	cfg, err := f.config(cmd)
	if err != nil {
		return err
	}
	cfg.OpenExisting = existing
	st, err := storage.OpenStore(cmd.Context(), cfg)
	if err != nil {
		return storageError(err)
	}
	defer st.Close()
	ts, ok := st.(store.Tokens)
	if !ok {
		return command.Failed(errors.New("this store keeps no tokens"))
	}
	return fn(ts)
}

// tokenDoc is the --json document of token add: the only time the token
// is shown.
type tokenDoc struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	Token string `json:"token"`
}

// tokenAddOptions are the flags of plugkit serve token add.
type tokenAddOptions struct {
	storage   storageFlags
	reader    bool
	publisher bool
	admin     bool
	asJSON    bool
	name      string
}

func newTokenAddCmd() *cobra.Command {
	opts := &tokenAddOptions{}
	cmd := &cobra.Command{
		Use:   "add (--reader | --publisher | --admin) [--name N]",
		Short: "Create a token and print it once",
		Long: `Add creates a token with one role and prints it once: store it now, it
cannot be shown again. With --json: {"id", "name", "role", "token"}.`,
		Example: `  plugkit serve token add --publisher --name ci --data ./registry
  PLUGKIT_DATABASE_URL=postgres://plugkit:…@db/plugkit plugkit serve token add --reader --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			role := ""
			for r, set := range map[string]bool{store.RoleReader: opts.reader, store.RolePublisher: opts.publisher, store.RoleAdmin: opts.admin} {
				if set && role != "" {
					return command.Usage(errors.New("give one of --reader, --publisher and --admin"))
				}
				if set {
					role = r
				}
			}
			if role == "" {
				return command.Usage(errors.New("give one of --reader, --publisher and --admin"))
			}
			return withTokens(cmd, &opts.storage, false, func(ts store.Tokens) error {
				t, secret, err := registry.NewToken(cmd.Context(), ts, role, opts.name)
				if err != nil {
					return command.Failed(err)
				}
				doc := tokenDoc{ID: t.ID, Name: t.Name, Role: t.Role, Token: secret}
				return command.Output(cmd, opts.asJSON, doc, func(w io.Writer) {
					fmt.Fprintf(w, "id:    %s\nname:  %s\nrole:  %s\ntoken: %s\n", t.ID, terminal.Safe(t.Name), t.Role, secret)
					fmt.Fprintln(cmd.ErrOrStderr(), "Store the token now: it is not shown again.")
				})
			})
		},
	}
	opts.storage.register(cmd, false)
	fl := cmd.Flags()
	fl.BoolVar(&opts.reader, "reader", false, "the token may read and report installations")
	fl.BoolVar(&opts.publisher, "publisher", false, "the token may publish new plugins and write to those it owns")
	fl.BoolVar(&opts.admin, "admin", false, "the token may do everything, to every plugin")
	fl.StringVar(&opts.name, "name", "", "a label for people (at most 128 printable bytes)")
	fl.BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}

// tokenListOptions are the flags of plugkit serve token list.
type tokenListOptions struct {
	storage storageFlags
	asJSON  bool
}

func newTokenListCmd() *cobra.Command {
	opts := &tokenListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the database tokens (never the tokens themselves)",
		Long: `List shows each database token's ID, role, name, creation date and, once
revoked, revocation date. With --json: {"tokens": [{"id", "name", "role",
"created_at", "revoked_at"}]}.`,
		Example: `  plugkit serve token list --data ./registry`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withTokens(cmd, &opts.storage, true, func(ts store.Tokens) error {
				list, err := ts.ListTokens(cmd.Context())
				if err != nil {
					return command.Failed(err)
				}
				return command.Output(cmd, opts.asJSON, map[string]any{"tokens": list}, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tROLE\tCREATED\tREVOKED\tNAME")
					for _, t := range list {
						revoked := "-"
						if t.RevokedAt != nil {
							revoked = t.RevokedAt.Format(time.RFC3339)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Role, t.CreatedAt.Format(time.RFC3339), revoked, terminal.Safe(t.Name))
					}
					tw.Flush()
				})
			})
		},
	}
	opts.storage.register(cmd, false)
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}

// tokenRevokeOptions are the flags of plugkit serve token revoke.
type tokenRevokeOptions struct {
	storage storageFlags
	asJSON  bool
}

func newTokenRevokeCmd() *cobra.Command {
	opts := &tokenRevokeOptions{}
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a database token on every replica",
		Long: `Revoke makes a database token authenticate nothing any more, on every
replica within a second. The plugins it owns keep it as their owner until an
admin transfers them. Revoking twice is not an error.`,
		Example: `  plugkit serve token revoke token:3f9a0c1e5b7d2468 --data ./registry`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withTokens(cmd, &opts.storage, true, func(ts store.Tokens) error {
				t, err := ts.RevokeToken(cmd.Context(), args[0])
				if errors.Is(err, store.ErrNotFound) {
					return command.Failed(fmt.Errorf("no token %s", terminal.Safe(args[0])))
				}
				if err != nil {
					return command.Failed(err)
				}
				return command.Output(cmd, opts.asJSON, t, func(w io.Writer) {
					fmt.Fprintf(w, "revoked %s (%s) at %s\n", t.ID, t.Role, t.RevokedAt.Format(time.RFC3339))
				})
			})
		},
	}
	opts.storage.register(cmd, false)
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}
