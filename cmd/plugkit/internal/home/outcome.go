package home

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/install"
)

// OutcomeDoc is the --json document of sync and update: every plugin's
// own outcome, and the operation's error (null when it succeeded).
type OutcomeDoc struct {
	Plugins []PluginOutcome `json:"plugins"`
	// DryRun says that nothing was written (update --dry-run).
	DryRun   bool                 `json:"dryRun,omitempty"`
	Warnings []string             `json:"warnings,omitempty"`
	Error    *command.ErrorDetail `json:"error"`
}

// PluginOutcome is what sync or update did for one plugin.
type PluginOutcome struct {
	Name string `json:"name"`
	// Outcome is installed, updated, unchanged, restored, failed or
	// skipped (not done because the operation stopped as a whole: consent
	// refused, the trust policy refused another plugin).
	Outcome string `json:"outcome"`
	// Change is what changed (or, dry, would change): versions,
	// identities, the launch surface's differences.
	Change *install.Change `json:"change,omitempty"`
	// Error is why this plugin failed.
	Error *command.ErrorDetail `json:"error,omitempty"`
}

// Outcomes of a PluginOutcome.
const (
	OutcomeInstalled = "installed"
	OutcomeUpdated   = "updated"
	OutcomeUnchanged = "unchanged"
	OutcomeRestored  = "restored"
	OutcomeFailed    = "failed"
	OutcomeSkipped   = "skipped"
)

// outcomes describes res, the result of sync or update, and err, its
// error. A *install.FailedError leaves the other plugins' changes
// standing; any other error stopped the operation, so that the plugins it
// would have changed are skipped.
func outcomes(res *install.Result, err error, dry bool) OutcomeDoc {
	doc := OutcomeDoc{Plugins: []PluginOutcome{}, DryRun: dry}
	var fe *install.FailedError
	stopped := err != nil && !errors.As(err, &fe)
	if err != nil {
		doc.Error = command.Detail(Error(err))
	}
	if res == nil {
		return doc
	}
	doc.Warnings = res.Warnings
	for _, c := range res.Changes {
		o := PluginOutcome{Name: c.Name, Change: c}
		switch c.Action {
		case install.ActionFailed:
			o.Outcome, o.Error, o.Change = OutcomeFailed, command.Detail(Error(c.Err)), nil
		case install.ActionNone:
			o.Outcome, o.Change = OutcomeUnchanged, nil
		case install.ActionRestore:
			o.Outcome = OutcomeRestored
		case install.ActionUpdate:
			o.Outcome = OutcomeUpdated
		default:
			o.Outcome = OutcomeInstalled
		}
		if stopped && o.Outcome != OutcomeUnchanged && o.Outcome != OutcomeFailed {
			o.Outcome = OutcomeSkipped
		}
		doc.Plugins = append(doc.Plugins, o)
	}
	return doc
}

// finishOutcomes prints what sync or update did, plugin by plugin (one
// document with --json, whether it failed or not), and returns the exit
// error.
func (f *homeFlags) finishOutcomes(cmd *cobra.Command, res *install.Result, err error, dry bool) error {
	doc := outcomes(res, err, dry)
	if f.asJSON {
		if werr := command.WriteJSON(cmd.OutOrStdout(), doc); werr != nil {
			return command.Usage(werr)
		}
	} else if res != nil {
		var fe *install.FailedError
		// Stopped as a whole, nothing was written: say what would have been.
		stopped := err != nil && !errors.As(err, &fe)
		printOutcomes(cmd.OutOrStdout(), res, doc, dry || stopped)
	}
	return Error(err)
}

// printOutcomes prints one line (and its details) per plugin, each failure
// with its code.
func printOutcomes(w io.Writer, res *install.Result, doc OutcomeDoc, dry bool) {
	if len(res.Changes) == 0 {
		fmt.Fprintln(w, "nothing to do")
	}
	for i, c := range res.Changes {
		if o := doc.Plugins[i]; o.Error != nil {
			fmt.Fprintf(w, "%s: failed (%s): %s\n", safe(c.Name), o.Error.Code, safe(o.Error.Message))
			continue
		}
		printChange(w, c, dry)
	}
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", safe(warn))
	}
}
