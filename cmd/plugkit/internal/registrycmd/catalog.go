package registrycmd

import (
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
)

// catalogOptions are the flags of plugkit catalog.
type catalogOptions struct {
	registry remote.RegistryFlags
}

// NewCmdCatalog builds plugkit catalog, which runs with fac.
func NewCmdCatalog(fac *factory.Factory) *cobra.Command {
	opts := &catalogOptions{}
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "List a registry's plugins and their channels",
		Long: `Catalog prints every plugin of a registry, one a line: its ID, its channels
and the versions they point at, its number of releases and its description.
The registry serves its catalog in pages; catalog follows them all (within
128 MiB). --json prints the whole catalog as one document.

Exit status: 0 listed, 1 refused (no or wrong token) or unreachable, 2 usage
error.`,
		Example: `  plugkit catalog --registry http://127.0.0.1:8080
  plugkit catalog --registry https://plugins.example.com --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.registry.Client()
			if err != nil {
				return err
			}
			cat, err := c.Catalog(cmd.Context())
			if err != nil {
				return opts.registry.Refused(cmd, c, remote.Request{Action: "read", Role: "reader"}, err)
			}
			return command.Output(cmd, opts.registry.JSON, cat, func(w io.Writer) {
				for _, p := range cat.Plugins {
					var chans []string
					for ch, rel := range p.Channels {
						chans = append(chans, ch+"="+strings.TrimPrefix(rel, p.ID+"@"))
					}
					sort.Strings(chans)
					command.Printf(w, "%s\t%s\t%s\t%s\n", p.ID, strings.Join(chans, ","), command.Plural(len(p.Releases), "release"), p.Description)
				}
			})
		},
	}
	opts.registry.Register(cmd)
	return cmd
}
