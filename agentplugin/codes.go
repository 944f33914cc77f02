package agentplugin

// Diagnostic codes. They are stable: tools match on them. docs/diagnostics.md
// explains each one; skill codes (skill-*) come from package skill.
const (
	// The manifest: any error among these rejects the plugin.
	CodeManifestMissing       = "manifest-missing"
	CodeManifestNotFile       = "manifest-not-file"
	CodeManifestEscapes       = "manifest-escapes-root"
	CodeManifestJSON          = "manifest-json-invalid"
	CodeManifestDuplicateKey  = "manifest-duplicate-key"
	CodeManifestNotObject     = "manifest-not-object"
	CodeManifestRequired      = "manifest-required-missing"
	CodeManifestSchema        = "manifest-schema-unsupported"
	CodeManifestType          = "manifest-field-type"
	CodeManifestName          = "manifest-name-invalid"
	CodeManifestAuthor        = "manifest-author-invalid"
	CodeManifestExtensionType = "manifest-extension-not-object"

	// The manifest: warnings, reported and ignored (spec 5.2, 8.1).
	CodeManifestUnknownField       = "manifest-unknown-field"
	CodeManifestExtensionsNotObj   = "manifest-extensions-not-object"
	CodeManifestExtensionNamespace = "manifest-extension-namespace"

	// Skills.
	CodeSkillsNotDir     = "skills-not-directory"
	CodeSkillsEscapes    = "skills-escapes-root"
	CodeSkillEscapes     = "skill-escapes-root"
	CodeSkillMDNotFile   = "skill-md-not-file"
	CodeSkillMDMissing   = "skill-md-missing"
	CodeSkillsLimit      = "skills-limit"
	CodeSkillDuplicateID = "skill-duplicate-name"

	// mcp.json as a whole: any error among these disables MCP.
	CodeMCPNotFile        = "mcp-not-file"
	CodeMCPEscapes        = "mcp-escapes-root"
	CodeMCPJSON           = "mcp-json-invalid"
	CodeMCPDuplicateKey   = "mcp-duplicate-key"
	CodeMCPNotObject      = "mcp-not-object"
	CodeMCPRequired       = "mcp-required-missing"
	CodeMCPSchema         = "mcp-schema-unsupported"
	CodeMCPSchemaMismatch = "mcp-schema-mismatch"
	CodeMCPUnknownField   = "mcp-unknown-field"
	CodeMCPServersType    = "mcp-servers-not-object"
	CodeMCPServersLimit   = "mcp-servers-limit"

	// One server entry: any error among these skips that server.
	CodeServerNotObject      = "mcp-server-not-object"
	CodeServerType           = "mcp-server-type-invalid"
	CodeServerUnknownField   = "mcp-server-unknown-field"
	CodeServerFieldType      = "mcp-server-field-type"
	CodeServerRequired       = "mcp-server-required-missing"
	CodeServerName           = "mcp-server-name-invalid"
	CodeCommandInvalid       = "mcp-command-invalid"
	CodeCommandEscapes       = "mcp-command-escapes-root"
	CodeCwdInvalid           = "mcp-cwd-invalid"
	CodeCwdEscapes           = "mcp-cwd-escapes-root"
	CodeEnvReserved          = "mcp-env-reserved"
	CodeEnvName              = "mcp-env-name-invalid"
	CodeURLInvalid           = "mcp-url-invalid"
	CodeURLInsecure          = "mcp-url-insecure"
	CodeHeaderInvalid        = "mcp-header-invalid"
	CodeHeaderDuplicate      = "mcp-header-duplicate"
	CodeTransportUnsupported = "mcp-transport-unsupported" // a warning: lack of support is not an error

	// One server entry: warnings that do not skip it.
	CodeCommandNotFound      = "mcp-command-not-found"
	CodeCommandNotExecutable = "mcp-command-not-executable"

	// Other package paths (spec 4.1, boundary 5): access denied, warnings.
	CodePathEscapes = "path-escapes-root"
	CodePathCycle   = "path-cycle"
	CodePathBroken  = "path-broken-link"
	CodePathSpecial = "path-special-file"
	CodePathName    = "path-invalid-name"

	// The diagnostics themselves.
	CodeDiagnosticsTruncated = "diagnostics-truncated"
)
