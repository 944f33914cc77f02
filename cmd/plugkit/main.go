// Command plugkit validates, packs, distributes and runs Agent Plugins 1.0.0.
//
// Exit codes: 0 success, 1 the input is invalid or the operation failed,
// 2 usage or I/O error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// verbs are the constructors of plugkit's subcommands; each verb's file
// appends its own in an init function, so verbs stay independent.
var verbs []func() *cobra.Command

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// exitError makes a command end with a given exit code. A nil err means the
// command already reported everything and only the code remains.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// failed ends a command with exit code 1: the input is invalid or the
// operation failed.
func failed(err error) error { return &exitError{code: exitFailed, err: err} }

// usage ends a command with exit code 2: a usage or I/O error.
func usage(err error) error { return &exitError{code: exitUsage, err: err} }

// newRootCmd builds a fresh command tree, so that tests can run plugkit
// in-process any number of times.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "plugkit",
		Short:         "Validate, pack, distribute and run Agent Plugins 1.0.0",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usage(err) })
	for _, v := range verbs {
		root.AddCommand(v())
	}
	return root
}

// run executes plugkit with args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "plugkit:", ee.err)
		}
		return ee.code
	}
	// Errors cobra raises itself (unknown command, wrong argument count)
	// are usage errors.
	fmt.Fprintln(stderr, "plugkit:", err)
	return exitUsage
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
