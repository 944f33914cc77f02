// Command plugkit validates, packs, distributes, installs and runs Agent
// Plugins 1.0.0: one program with every verb.
//
// Exit codes: 0 success, 1 the input is invalid or the operation failed,
// 2 usage or I/O error, 130 interrupted. With --json, every verb prints
// exactly one JSON document on stdout, on failure too (docs/cli.md).
package main

import "github.com/plugkit/plugkit/internal/cli"

// program is plugkit: package cli's verbs and these, which work on a
// plugin home, sign and verify, run MCP servers and serve a registry.
var program = cli.Program{Verbs: cli.Verbs{
	"attest":  newAttestCmd,
	"check":   newCheckCmd,
	"gateway": newGatewayCmd,
	"install": newInstallCmd,
	"key":     newKeyCmd,
	"list":    newListCmd,
	"mcp":     newMCPCmd,
	"policy":  newPolicyCmd,
	"remove":  newRemoveCmd,
	"serve":   newServeCmd,
	"sign":    newSignCmd,
	"sync":    newSyncCmd,
	"update":  newUpdateCmd,
	"verify":  newVerifyCmd,
}}

func main() { program.Main() }
