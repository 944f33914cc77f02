package registrycmd

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/distribution"
)

// NewCmdOwners builds plugkit owners, which runs with fac.
func NewCmdOwners(fac *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "owners",
		Short: "Show or change who may publish a plugin on a registry",
		Long: `A plugin on a registry belongs to the identity of the token that first
published it: only its owners (and admins) may publish new releases, move
its channels and yank them. A token's identity is NAME for a token
configured as NAME=SECRET on the server, or "token:" and 16 hex digits of
its SHA-256 for a bare secret (plugkit serve logs the identities it loads).
That hash lets anyone who sees the identity test guesses of the secret
offline, so configure tokens as NAME=SECRET with long random secrets.

list needs a publisher or admin token; grant, revoke and transfer need an
admin token (PLUGKIT_ADMIN_TOKENS on the server). A plugin whose last owner
is revoked, or that was published before owners existed, is admin-only until
an admin grants it to someone.`,
	}
	cmd.AddCommand(newOwnersListCmd())
	for _, op := range []struct{ name, short, long string }{
		{"grant", "Add an owner to a plugin", "Grant adds IDENTITY to the owners of PLUGIN."},
		{"revoke", "Remove an owner from a plugin", "Revoke removes IDENTITY from the owners of PLUGIN; without owners\nthe plugin is admin-only."},
		{"transfer", "Make an identity the only owner of a plugin", "Transfer makes IDENTITY the only owner of PLUGIN."},
	} {
		cmd.AddCommand(newOwnersChangeCmd(op.name, op.short, op.long))
	}
	return cmd
}

// ownersListOptions are the flags of plugkit owners list.
type ownersListOptions struct {
	registry remote.RegistryFlags
}

func newOwnersListCmd() *cobra.Command {
	opts := &ownersListOptions{}
	cmd := &cobra.Command{
		Use:   "list PLUGIN",
		Short: "List the owners of a plugin",
		Long: `List prints the identities that own PLUGIN ("none" when the plugin is
admin-only).

Exit status: 0 listed, 1 refused or not found, 2 usage error.`,
		Example: `  plugkit owners list release-notes --registry http://127.0.0.1:8080`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := distribution.CheckPluginID(args[0]); err != nil {
				return command.Usage(err)
			}
			c, err := opts.registry.Client()
			if err != nil {
				return err
			}
			o, err := c.Owners(cmd.Context(), args[0])
			if err != nil {
				return opts.registry.Refused(cmd, c, remote.Request{Action: "list owners", Role: "publisher", PluginID: args[0]}, err)
			}
			return command.Output(cmd, opts.registry.JSON, o, func(w io.Writer) { printOwners(w, o) })
		},
	}
	opts.registry.Register(cmd)
	return cmd
}

// ownersChangeOptions are the flags of plugkit owners grant and owners revoke.
type ownersChangeOptions struct {
	registry remote.RegistryFlags
}

func newOwnersChangeCmd(action, short, long string) *cobra.Command {
	opts := &ownersChangeOptions{}
	cmd := &cobra.Command{
		Use:   action + " PLUGIN IDENTITY",
		Short: short,
		Long: long + ` It needs an admin token, from $PLUGKIT_TOKEN
or --token-file, and prints the owners afterwards.

Exit status: 0 done, 1 refused or not found, 2 usage error.`,
		Example: "  PLUGKIT_TOKEN=$ADMIN_TOKEN plugkit owners " + action + " release-notes ci-bot --registry http://127.0.0.1:8080",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			u := distribution.OwnerUpdate{PluginID: args[0], Action: action, Identity: args[1]}
			for _, err := range []error{distribution.CheckPluginID(u.PluginID), distribution.CheckIdentity(u.Identity)} {
				if err != nil {
					return command.Usage(err)
				}
			}
			c, err := opts.registry.Client()
			if err != nil {
				return err
			}
			o, err := c.ChangeOwners(cmd.Context(), u)
			if err != nil {
				return opts.registry.Refused(cmd, c, remote.Request{Action: "change owners", Role: "admin", PluginID: u.PluginID}, err)
			}
			return command.Output(cmd, opts.registry.JSON, o, func(w io.Writer) { printOwners(w, o) })
		},
	}
	opts.registry.Register(cmd)
	return cmd
}

func printOwners(w io.Writer, o *distribution.Owners) {
	owners := "none (admin-only)"
	if len(o.Owners) > 0 {
		owners = strings.Join(o.Owners, ", ")
	}
	command.Printf(w, "%s: owners: %s\n", o.PluginID, owners)
}
