package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/internal/cli"
)

func init() { cli.Register(newListCmd) }

// listDoc is the --json document of plugkit list.
type listDoc struct {
	Plugins []listEntry `json:"plugins"`
}

type listEntry struct {
	Name          string         `json:"name"`
	Version       string         `json:"version"`
	Identity      string         `json:"identity"`
	ArchiveDigest string         `json:"archiveDigest"`
	Source        install.Source `json:"source"`
	Path          string         `json:"path"`
	DataDir       string         `json:"dataDir"`
	InstalledAt   string         `json:"installedAt"`
	Skills        []string       `json:"skills"`
	Servers       []string       `json:"servers"`
}

func newListCmd() *cobra.Command {
	var hf homeFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the plugins installed in the home",
		Long: `List prints the plugins that HOME/plugkit.lock records: name, version, source
and identity. It reads only the lock file, never waits for a writer, and
never sees a change half made.

--json prints {"plugins": [{"name", "version", "identity", "archiveDigest",
"source", "path" (its read-only tree in the store), "dataDir" (its
PLUGIN_DATA), "installedAt", "skills": [ids], "servers": [ids]}]}.`,
		Example: `  plugkit list
  plugkit list --home ./.plugkit --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := hf.open(false)
			if err != nil {
				return err
			}
			list, err := h.List()
			if err != nil {
				return homeError(err)
			}
			doc := listDoc{Plugins: make([]listEntry, len(list))}
			for i, in := range list {
				doc.Plugins[i] = listEntryOf(in)
			}
			return cli.Output(cmd, hf.asJSON, doc, func(w io.Writer) { printList(w, h.Dir(), doc) })
		},
	}
	hf.register(cmd, false, false)
	return cmd
}

func listEntryOf(in install.Installed) listEntry {
	e := listEntry{Name: in.Name, Version: in.Version, Identity: in.Identity, ArchiveDigest: in.ArchiveDigest,
		Source: in.Source, Path: in.Path, DataDir: in.DataDir, InstalledAt: in.InstalledAt,
		Skills: make([]string, len(in.Skills)), Servers: make([]string, len(in.Servers))}
	for i, s := range in.Skills {
		e.Skills[i] = in.Name + "/" + s
	}
	for i, s := range in.Servers {
		e.Servers[i] = in.Name + "/" + s.Name
	}
	return e
}

func printList(w io.Writer, home string, doc listDoc) {
	if len(doc.Plugins) == 0 {
		fmt.Fprintf(w, "no plugins installed in %s\n", safe(home))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSKILLS\tSERVERS\tIDENTITY\tSOURCE")
	for _, p := range doc.Plugins {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", safe(p.Name), safe(p.Version), len(p.Skills), len(p.Servers), shortDigest(p.Identity), safe(p.Source.String()))
	}
	tw.Flush()
}
