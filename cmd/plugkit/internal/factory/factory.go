// Package factory hands plugkit's verbs what they depend on: the streams
// and whether each is a terminal, how long progress waits before it draws,
// where the plugin home is, and the switches that differ between the
// program and its in-process tests. The root command builds one Factory
// and passes it to every verb's constructor; a test builds its own instead
// of replacing package variables (gh calls the same thing cmdutil.Factory).
package factory

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/plugkit/plugkit/install"
)

// Factory is what a verb may use of the world outside its arguments. The
// zero value is a quiet test process: no streams (cobra's defaults, the
// process's own), nothing a terminal, progress drawn at once if it could
// draw, no home but --home, and no subreaper.
type Factory struct {
	// In, Out and Err are the verb's stdin, stdout and stderr; nil is the
	// process's own.
	In       io.Reader
	Out, Err io.Writer
	// InTerminal is whether In is a terminal a person answers prompts
	// from (a consent question, a password); ErrTerminal whether Err is
	// one that progress bars may draw on.
	InTerminal, ErrTerminal bool
	// ProgressDelay is how long an operation runs before its progress
	// shows: quick ones never draw anything.
	ProgressDelay time.Duration
	// DefaultHome finds the plugin home when --home is not given; nil
	// means there is none and --home is required.
	DefaultHome func() (string, error)
	// Subreaper makes plugkit a child subreaper while it runs MCP servers
	// (mcprun): plugkit starts no process of its own besides them, so
	// every orphan it adopts is a server's, and ending them all is right.
	// Tests that run servers in process leave it off: their binary has
	// other children (builds, services) that the orphan sweep would take
	// for servers' orphans.
	Subreaper bool
}

// New is the Factory of the plugkit process: its own streams, checked once
// for terminals, progress after a second, the home of install.DefaultDir.
func New() *Factory {
	return &Factory{
		In:            os.Stdin,
		Out:           os.Stdout,
		Err:           os.Stderr,
		InTerminal:    isTerminal(os.Stdin),
		ErrTerminal:   isTerminal(os.Stderr),
		ProgressDelay: time.Second,
		DefaultHome:   install.DefaultDir,
		Subreaper:     true,
	}
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Quiet is the Factory of an in-process run of plugkit, as tests make
// one: output to stdout and stderr, no stdin, no terminal, the home of
// install.DefaultDir and no subreaper.
func Quiet(stdout, stderr io.Writer) *Factory {
	return &Factory{Out: stdout, Err: stderr, ProgressDelay: time.Second, DefaultHome: install.DefaultDir}
}

// Home is the plugin home a verb works on: flag (its --home) when given,
// else the default home.
func (f *Factory) Home(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if f.DefaultHome == nil {
		return "", errors.New("no plugin home: give --home")
	}
	return f.DefaultHome()
}
