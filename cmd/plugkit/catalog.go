package main

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

func init() { verbs = append(verbs, newCatalogCmd) }

func newCatalogCmd() *cobra.Command {
	var rf registryFlags
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "List a registry's plugins and their channels",
		Long: `Catalog prints every plugin of a registry with its channels and the
number of its releases. --json prints the registry's catalog document.

Exit status: 0 listed, 1 refused (401, 403) or unreachable, 2 usage error.`,
		Example: `  plugkit catalog --registry http://127.0.0.1:8080
  plugkit catalog --registry https://plugins.example.com --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := rf.client()
			if err != nil {
				return err
			}
			cat, err := c.Catalog(cmd.Context())
			if err != nil {
				return refused(cmd, err)
			}
			if rf.asJSON {
				return writeJSON(cmd.OutOrStdout(), cat)
			}
			w := cmd.OutOrStdout()
			for _, p := range cat.Plugins {
				var chans []string
				for ch, rel := range p.Channels {
					chans = append(chans, ch+"="+strings.TrimPrefix(rel, p.ID+"@"))
				}
				sort.Strings(chans)
				printf(w, "%s\t%s\t%s\t%s\n", p.ID, strings.Join(chans, ","),
					plural(len(p.Releases), "release"), p.Description)
			}
			return nil
		},
	}
	rf.register(cmd)
	return cmd
}
