package build

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
)

// schemaVSCode is the argument of plugkit schema that prints VS Code
// settings rather than a schema.
const schemaVSCode = "vscode"

// schemaOptions are the flags of plugkit schema.
type schemaOptions struct {
	version string
	asJSON  bool
}

// NewCmdSchema builds plugkit schema, which runs with fac.
func NewCmdSchema(fac *factory.Factory) *cobra.Command {
	opts := &schemaOptions{}
	cmd := &cobra.Command{
		Use:   "schema plugin|mcp|vscode",
		Short: "Print the JSON Schema of plugin.json or mcp.json, for editors and other tools",
		Long: `Schema prints a JSON Schema (draft 2020-12) of plugin.json (plugin) or mcp.json
(mcp) for an Agent Plugins version, written from the rules plugkit validate
applies. It accepts exactly the documents the official schemas accept, with
two rules of the specification's text added (server names hold no '/', env
names no '='), and works offline: nothing is fetched. Its $id is plugkit's
own, never the specification's identifier.

A schema checks types and fields as you type. Paths that escape the plugin,
URLs, headers and commands only plugkit validate checks.

vscode prints a .vscode/settings.json fragment that makes VS Code check every
plugin.json and mcp.json declaring this version's $schema against these
schemas, offline. docs/editors.md shows how to set up VS Code and JetBrains
IDEs.

Exit status: 0 printed, 2 usage error (an unknown document or version).`,
		Example: `  plugkit schema plugin > plugin.schema.json
  plugkit schema mcp --version 1.0.0
  plugkit schema vscode > .vscode/settings.json`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{agentplugin.SchemaPlugin, agentplugin.SchemaMCP, schemaVSCode},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(cmd.ValidArgs, args[0]) {
				return command.Usagef("unknown document %q: plugin, mcp or vscode", args[0])
			}
			doc, err := schemaDocument(args[0], opts.version)
			if err != nil {
				return command.Usage(err)
			}
			// The document is JSON with or without --json: the flag only
			// makes a failure a JSON document too.
			return command.Output(cmd, true, doc, func(io.Writer) {})
		},
	}
	cmd.Flags().StringVar(&opts.version, "version", agentplugin.SupportedVersions()[len(agentplugin.SupportedVersions())-1],
		"Agent Plugins version of the schema")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print a JSON failure document on failure (the output is JSON anyway)")
	return cmd
}

// schemaDocument is what plugkit schema prints for what (plugin, mcp or
// vscode) in version.
func schemaDocument(what, version string) (json.RawMessage, error) {
	if what != schemaVSCode {
		return agentplugin.JSONSchema(what, version)
	}
	ids, ok := agentplugin.Schemas(version)
	if !ok {
		_, err := agentplugin.JSONSchema(agentplugin.SchemaPlugin, version)
		return nil, err
	}
	type entry struct {
		URL    string          `json:"url"`
		Schema json.RawMessage `json:"schema"`
	}
	var entries []entry
	for _, d := range []struct{ document, id string }{{agentplugin.SchemaPlugin, ids.Manifest}, {agentplugin.SchemaMCP, ids.MCP}} {
		s, err := agentplugin.JSONSchema(d.document, version)
		if err != nil {
			return nil, err
		}
		// VS Code reads a file's $schema first: registering the schema
		// under that identifier, with its content inline, is what makes
		// it check the file offline.
		entries = append(entries, entry{URL: d.id, Schema: s})
	}
	return json.Marshal(map[string]any{"json.schemas": entries})
}
