package home

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/install"
)

// checkDoc is the --json document of plugkit check.
type checkDoc struct {
	OK      bool                  `json:"ok"`
	Plugins []install.CheckReport `json:"plugins"`
	// Policy is what is wrong with the home's trust policy as the lock
	// records it: an error (policy-missing, policy-mismatch,
	// policy-invalid), or a warning that the lock no longer records the
	// policy the home holds; absent when all is well.
	Policy *policyReport `json:"policy,omitempty"`
}

type policyReport struct {
	Error   *command.ErrorDetail `json:"error,omitempty"`
	Warning string               `json:"warning,omitempty"`
}

// checkOptions are the flags of plugkit check.
type checkOptions struct {
	home homeFlags
}

// NewCmdCheck builds plugkit check, which runs with fac.
func NewCmdCheck(fac *factory.Factory) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [NAME...]",
		Short: "Re-hash installed trees against their file lists and the lock",
		Long: `Check is to installed plugins what go mod verify is to modules (plugkit
verify is about signatures): it re-hashes every file of each named plugin's
tree (every installed plugin when no NAME is given) against the tree's
.files list, checks the tree still packs to the archive digest the lock
records, and that the plugin it holds has the name, version and launch
surface its lock entry records (a difference is lock-mismatch: the lock
was edited; reinstall the plugin to review what it runs). A skill list
other than the tree's is a warning, which sync and update record. It also
checks the home's trust policy against the one the lock records. It
writes nothing; plugkit sync restores a modified tree.

--json prints {"ok": bool, "plugins": [{"name", "problems": [{"path",
"kind" (modified, missing, extra, lock-mismatch), "detail"}], "warnings"}],
"policy": {"error": {"code", "message"}, "warning"} (when not as
recorded)}.

Exit status: 0 every tree intact and the policy as the lock records it, 1
any difference, 2 usage or I/O error.`,
		Example: `  plugkit check
  plugkit check kv --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := opts.home.open(false)
			if err != nil {
				return err
			}
			reps, err := h.Check(cmd.Context(), args)
			if err != nil {
				return Error(err)
			}
			doc := checkDoc{OK: true, Plugins: reps}
			bad, code := 0, command.CodeModified
			for _, r := range reps {
				if len(r.Problems) > 0 {
					doc.OK = false
					bad++
				}
				if len(r.Problems) > 0 && r.Problems[0].Kind == "lock-mismatch" {
					code = command.CodeLockMismatch
				}
			}
			warning, perr := h.CheckPolicy()
			switch {
			case perr != nil:
				doc.OK, doc.Policy = false, &policyReport{Error: command.Detail(Error(perr))}
			case warning != "":
				doc.Policy = &policyReport{Warning: warning}
			}
			if err := command.Output(cmd, opts.home.asJSON, doc, func(w io.Writer) { printCheck(w, doc) }); err != nil {
				return err
			}
			switch {
			case bad > 0:
				return command.WithCode(code, command.Failed(fmt.Errorf("%d of %s %w (plugkit sync restores a modified tree; reinstall a mismatched one)", bad, command.Plural(len(reps), "plugin"), errModifiedVerb)))
			case perr != nil:
				return Error(perr)
			}
			return nil
		},
	}
	opts.home.register(fac, cmd, false, false)
	return cmd
}

var errModifiedVerb = errors.New("not as the lock records")

func printCheck(w io.Writer, doc checkDoc) {
	for _, r := range doc.Plugins {
		if len(r.Problems) == 0 {
			fmt.Fprintf(w, "%s: ok\n", safe(r.Name))
		} else {
			fmt.Fprintf(w, "%s: %s\n", safe(r.Name), command.Plural(len(r.Problems), "difference"))
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s\n", safe(p.String()))
		}
		for _, d := range r.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", safe(d.Message))
		}
	}
	if len(doc.Plugins) == 0 {
		fmt.Fprintln(w, "no plugins installed")
	}
	if doc.Policy != nil && doc.Policy.Error != nil {
		fmt.Fprintf(w, "trust policy: %s: %s\n", doc.Policy.Error.Code, safe(doc.Policy.Error.Message))
	}
	if doc.Policy != nil && doc.Policy.Warning != "" {
		fmt.Fprintf(w, "trust policy: warning: %s\n", safe(doc.Policy.Warning))
	}
}
