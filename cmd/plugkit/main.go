// Command plugkit validates, packs, distributes, installs and runs Agent
// Plugins 1.0.0: one program with every verb (package root lists them).
//
// Exit codes: 0 success, 1 the input is invalid or the operation failed,
// 2 usage or I/O error, 130 interrupted. With --json, every verb prints
// exactly one JSON document on stdout, on failure too (docs/cli.md).
package main

import "github.com/plugkit/plugkit/cmd/plugkit/internal/root"

func main() { root.Main() }
