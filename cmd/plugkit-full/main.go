// Command plugkit-full is the complete plugkit: every verb of plugkit,
// with those that link the heavy packages (the registry server, signing
// and verifying, the plugin home, MCP). The light plugkit runs it, from
// beside its own executable, for those verbs; it also works alone, with
// the same root command, help and outputs.
//
// Exit codes: 0 success, 1 the input is invalid or the operation failed,
// 2 usage or I/O error, 130 interrupted (docs/cli.md).
package main

import (
	"github.com/plugkit/plugkit/internal/cli"
	"github.com/plugkit/plugkit/internal/gcinit"
)

func main() {
	gcinit.Restore()
	cli.Main()
}
