package home

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/install"
)

// ListDoc is the --json document of plugkit list.
type ListDoc struct {
	Plugins []ListEntry `json:"plugins"`
}

// ListEntry is one installed plugin in ListDoc.
type ListEntry struct {
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
	// State is what its tree holds: ok, missing, modified (against its
	// file list), lock-mismatch (another plugin, version or launch
	// surface than the entry), or invalid (the loader refuses it).
	State string `json:"state"`
	// Error says why, when State is not ok.
	Error *command.ErrorDetail `json:"error,omitempty"`
	// Warnings are the differences that do not stop it (lock-skills-differ).
	Warnings []agentplugin.Diagnostic `json:"warnings,omitempty"`
}

// States of a ListEntry.
const (
	StateOK       = "ok"
	StateMissing  = "missing"
	StateModified = "modified"
	StateMismatch = "lock-mismatch"
	StateInvalid  = "invalid"
)

// checkState fills e's state from loading its tree as a host would.
func checkState(h *install.Home, in *install.Installed, e *ListEntry) {
	pkg, err := h.Load(in, agentplugin.Options{})
	var me *install.ModifiedError
	switch {
	case err == nil:
		e.State = StateOK
		for _, d := range pkg.Diagnostics {
			if d.Code == install.CodeSkillsDiffer {
				e.Warnings = append(e.Warnings, d)
			}
		}
		return
	case errors.As(err, &me) && len(me.Problems) == 1 && me.Problems[0].Path == "." && me.Problems[0].Kind == "missing":
		e.State = StateMissing
	case errors.Is(err, install.ErrModified):
		e.State = StateModified
	case errors.Is(err, install.ErrLockMismatch):
		e.State = StateMismatch
	default:
		e.State = StateInvalid
	}
	e.Error = command.Detail(Error(err))
}

// listOptions are the flags of plugkit list.
type listOptions struct {
	home homeFlags
}

// NewCmdList builds plugkit list, which runs with fac.
func NewCmdList(fac *factory.Factory) *cobra.Command {
	opts := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the plugins installed in the home",
		Long: `List prints the plugins that HOME/plugkit.lock records: name, version, source,
identity, and the state of each one's tree, checked as a host checks it
before running it: ok, missing, modified (its files differ from its file
list), lock-mismatch (it holds another plugin, version or launch surface
than the lock records: the lock was edited) or invalid. It never waits for
a writer and never sees a change half made.

--json prints {"plugins": [{"name", "version", "identity", "archiveDigest",
"source", "path" (its read-only tree in the store), "dataDir" (its
PLUGIN_DATA), "installedAt", "skills": [ids], "servers": [ids], "state",
"error": {"code", "message"} (when not ok), "warnings"}]}.

Exit status: 0 every plugin ok, 1 any plugin not ok (plugkit check says
more; plugkit sync restores a missing or modified tree), 2 usage or I/O
error.`,
		Example: `  plugkit list
  plugkit list --home ./.plugkit --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := opts.home.open(false)
			if err != nil {
				return err
			}
			list, err := h.List()
			if err != nil {
				return Error(err)
			}
			doc := ListDoc{Plugins: make([]ListEntry, len(list))}
			var wg sync.WaitGroup
			sem := make(chan struct{}, runtime.GOMAXPROCS(0))
			for i := range list {
				doc.Plugins[i] = listEntryOf(list[i])
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					checkState(h, &list[i], &doc.Plugins[i])
				})
			}
			wg.Wait()
			if err := command.Output(cmd, opts.home.asJSON, doc, func(w io.Writer) { printList(w, h.Dir(), doc) }); err != nil {
				return err
			}
			return notOK(doc.Plugins)
		},
	}
	opts.home.register(fac, cmd, false, false)
	return cmd
}

func listEntryOf(in install.Installed) ListEntry {
	e := ListEntry{Name: in.Name, Version: in.Version, Identity: in.Identity, ArchiveDigest: in.ArchiveDigest,
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

func printList(w io.Writer, home string, doc ListDoc) {
	if len(doc.Plugins) == 0 {
		fmt.Fprintf(w, "no plugins installed in %s\n", safe(home))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSKILLS\tSERVERS\tSTATE\tIDENTITY\tSOURCE")
	for _, p := range doc.Plugins {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", safe(p.Name), safe(p.Version), len(p.Skills), len(p.Servers), p.State, shortDigest(p.Identity), safe(p.Source.String()))
	}
	tw.Flush()
	for _, p := range doc.Plugins {
		if p.Error != nil {
			fmt.Fprintf(w, "%s: %s\n", safe(p.Name), safe(p.Error.Message))
		}
		for _, d := range p.Warnings {
			fmt.Fprintf(w, "%s: warning: %s\n", safe(p.Name), safe(d.Message))
		}
	}
}

// notOK is the exit error of list when any plugin is not ok: the code of
// the first one's error.
func notOK(plugins []ListEntry) error {
	bad := 0
	var first *command.ErrorDetail
	for _, p := range plugins {
		if p.Error != nil {
			bad++
			if first == nil {
				first = p.Error
			}
		}
	}
	if bad == 0 {
		return nil
	}
	return command.WithCode(first.Code, command.Failed(fmt.Errorf("%d of %s not as the lock records (plugkit check says more; plugkit sync restores a missing or modified tree)",
		bad, command.Plural(len(plugins), "plugin"))))
}
