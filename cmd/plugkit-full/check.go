package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/internal/cli"
)

func init() { cli.Register(newCheckCmd) }

// checkDoc is the --json document of plugkit check.
type checkDoc struct {
	OK      bool                  `json:"ok"`
	Plugins []install.CheckReport `json:"plugins"`
}

func newCheckCmd() *cobra.Command {
	var hf homeFlags
	cmd := &cobra.Command{
		Use:   "check [NAME...]",
		Short: "Re-hash installed trees against their file lists and the lock",
		Long: `Check is to installed plugins what go mod verify is to modules (plugkit
verify is about signatures): it re-hashes every file of each named plugin's
tree (every installed plugin when no NAME is given) against the tree's
.files list, checks the tree still packs to the archive digest the lock
records, and reports modified, missing and extra files. It writes nothing;
plugkit sync restores a modified tree.

--json prints {"ok": bool, "plugins": [{"name", "problems": [{"path",
"kind" (modified, missing, extra), "detail"}]}]}.

Exit status: 0 every tree intact, 1 any difference, 2 usage or I/O error.`,
		Example: `  plugkit check
  plugkit check kv --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := hf.open(false)
			if err != nil {
				return err
			}
			reps, err := h.Check(cmd.Context(), args)
			if err != nil {
				return homeError(err)
			}
			doc := checkDoc{OK: true, Plugins: reps}
			bad := 0
			for _, r := range reps {
				if len(r.Problems) > 0 {
					doc.OK = false
					bad++
				}
			}
			if err := cli.Output(cmd, hf.asJSON, doc, func(w io.Writer) { printCheck(w, doc) }); err != nil {
				return err
			}
			if !doc.OK {
				return cli.WithCode(codeModified, cli.Failed(fmt.Errorf("%d of %s %w (plugkit sync restores)", bad, cli.Plural(len(reps), "plugin"), errModifiedVerb)))
			}
			return nil
		},
	}
	hf.register(cmd, false, false)
	return cmd
}

var errModifiedVerb = errors.New("modified")

func printCheck(w io.Writer, doc checkDoc) {
	for _, r := range doc.Plugins {
		if len(r.Problems) == 0 {
			fmt.Fprintf(w, "%s: ok\n", safe(r.Name))
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", safe(r.Name), cli.Plural(len(r.Problems), "difference"))
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s\n", safe(p.String()))
		}
	}
	if len(doc.Plugins) == 0 {
		fmt.Fprintln(w, "no plugins installed")
	}
}
