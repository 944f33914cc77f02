package install

import (
	"context"
	"errors"
	"fmt"

	"github.com/plugkit/plugkit/agentplugin"
)

// Action is what a change does to one plugin.
type Action string

// The actions of a Change.
const (
	// ActionInstall installs a plugin the home does not have.
	ActionInstall Action = "install"
	// ActionReplace installs a plugin over one of the same name from
	// another origin.
	ActionReplace Action = "replace"
	// ActionUpdate installs another version from the same origin.
	ActionUpdate Action = "update"
	// ActionRemove removes a plugin (and, purging, its data).
	ActionRemove Action = "remove"
	// ActionRestore writes again a tree that was missing or modified
	// (sync).
	ActionRestore Action = "restore"
	// ActionNone changes nothing: the plugin is already as asked.
	ActionNone Action = "none"
	// ActionFailed: the operation failed for this plugin (the Change's Err
	// says why) and changed nothing of it, while others may have changed.
	ActionFailed Action = "failed"
)

// Change is what an operation does, or would do, to one plugin.
type Change struct {
	Name   string `json:"name"`
	Action Action `json:"action"`
	// Old is the lock entry before the change (nil for a new plugin); New
	// the entry after it (nil for a removal).
	Old *Entry `json:"old,omitempty"`
	New *Entry `json:"new,omitempty"`
	// Surface is what the new launch surface adds, changes or removes
	// compared with the approved one; for a new plugin (or a replacing
	// one) every server is "added".
	Surface []SurfaceChange `json:"surface,omitempty"`
	// CodeFiles are the files added, changed or removed under the paths of
	// "./" commands (an update that changes what runs without changing the
	// launch surface).
	CodeFiles []string `json:"codeFiles,omitempty"`
	// DataReset says that the plugin's data directory starts empty because
	// its data came from DataFrom, another origin. With KeepData, DataFrom
	// is set and DataReset is not.
	DataReset bool    `json:"dataReset,omitempty"`
	DataFrom  *Source `json:"dataFrom,omitempty"`
	// DataPurged says that remove deleted the data directory.
	DataPurged bool `json:"dataPurged,omitempty"`
	// NeedsConsent says that the change needs the user's consent: a new
	// plugin, a replacement, or a wider launch surface.
	NeedsConsent bool `json:"needsConsent"`
	// Warnings are the new package's warning diagnostics.
	Warnings []agentplugin.Diagnostic `json:"warnings,omitempty"`
	// Refused is why the trust policy would refuse the change, in a dry
	// run (otherwise a refusal is the operation's error).
	Refused string `json:"refused,omitempty"`
	// Report is the outcome of reporting the installation to its
	// registry, when asked: ReportSent, or "failed: " and why. The
	// installation stands either way.
	Report string `json:"report,omitempty"`
	// ReportErr is the error of a report that failed, for errors.As: a
	// *distribution.StatusError when the registry refused it (401 when it
	// takes reports only with a token).
	ReportErr error `json:"-"`
	// Err is why the operation failed for this plugin (Action is
	// ActionFailed), for errors.Is; nil otherwise.
	Err error `json:"-"`
}

// Result is what an operation did, plugin by plugin.
type Result struct {
	Changes []*Change `json:"changes"`
	// Warnings are about the home as a whole: a trust policy the lock
	// does not record.
	Warnings []string `json:"warnings,omitempty"`
}

// Changed reports whether any change did something.
func (r *Result) Changed() bool {
	for _, c := range r.Changes {
		if c.Action != ActionNone && c.Action != ActionFailed {
			return true
		}
	}
	return false
}

// ConsentFunc asks whether a change may go ahead. It is called for every
// change that needs consent, before anything is written; one refusal
// stops the whole operation.
type ConsentFunc func(ctx context.Context, c *Change) (bool, error)

// Errors of the operations.
var (
	// ErrConsent: a change needs consent that was refused or could not
	// be asked for.
	ErrConsent = errors.New("consent needed")
	// ErrConflict: a plugin of that name is installed from another
	// origin.
	ErrConflict = errors.New("installed from another source")
	// ErrInvalidPlugin: the plugin loaded with error diagnostics.
	ErrInvalidPlugin = errors.New("plugin has errors")
	// ErrSourceChanged: a source now serves other bytes than the identity
	// the lock records.
	ErrSourceChanged = errors.New("source serves different content")
)

// InvalidError is a plugin refused for its error diagnostics.
type InvalidError struct {
	Name        string
	Diagnostics []agentplugin.Diagnostic
}

func (e *InvalidError) Error() string {
	for _, d := range e.Diagnostics {
		if d.Severity == agentplugin.Error {
			return fmt.Sprintf("%s: %s (first: %s)", e.Name, ErrInvalidPlugin, d)
		}
	}
	return fmt.Sprintf("%s: %s", e.Name, ErrInvalidPlugin)
}

// Is makes errors.Is(err, ErrInvalidPlugin) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalidPlugin }

// askConsent asks for each change that needs it; nil consent refuses.
func askConsent(ctx context.Context, consent ConsentFunc, changes []*Change) error {
	for _, c := range changes {
		if !c.NeedsConsent {
			continue
		}
		if consent == nil {
			return fmt.Errorf("%w to %s %s: nothing was changed", ErrConsent, c.Action, c.Name)
		}
		ok, err := consent(ctx, c)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w to %s %s: refused; nothing was changed", ErrConsent, c.Action, c.Name)
		}
	}
	return nil
}
