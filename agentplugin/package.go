// Package agentplugin loads and validates Agent Plugins 1.0.0 packages.
//
// Load judges a snapshot.Snapshot against every rule of the specification
// that does not start a process: the closed plugin.json manifest, component
// discovery from fixed locations, Agent Skills, mcp.json and its server
// variants, and the path-containment failure boundaries of section 4.1. It
// never touches the network and never executes anything.
//
// A plugin the specification says to reject makes Load return a
// *RejectedError carrying the reasons. Anything less — an invalid skill, an
// invalid mcp.json, a bad server entry, an unknown manifest field — is a
// Diagnostic on a Package that still loads.
package agentplugin

import (
	"encoding/json"

	"github.com/plugkit/plugkit/skill"
	"github.com/plugkit/plugkit/snapshot"
)

// Package is a loaded plugin.
type Package struct {
	// SpecVersion is the Agent Plugins version selected by $schema ("1.0.0").
	SpecVersion string
	// Manifest is the original plugin.json object, unknown fields included.
	Manifest map[string]json.RawMessage
	// Name and Version come from the manifest; Version may be empty.
	Name    string
	Version string
	// Description, License, Homepage, Repository and Keywords are the
	// manifest's optional metadata, empty when absent.
	Description string
	License     string
	Homepage    string
	Repository  string
	Keywords    []string
	Author      *Author

	// Skills are the valid skills, sorted by name.
	Skills []Skill
	// MCP tells whether mcp.json is absent, configured or disabled.
	MCP MCPState
	// Servers are the valid, supported MCP servers, sorted by name.
	Servers []Server

	// Extensions are the namespaces under the manifest's "extensions"
	// object, sorted; their values are kept opaque in ExtensionData.
	Extensions    []string
	ExtensionData map[string]json.RawMessage
	// ExtensionDirectories are the top-level directories named like a
	// reverse-domain namespace, sorted.
	ExtensionDirectories []string

	// Diagnostics are every problem found, in the order of the files and
	// positions they concern.
	Diagnostics []Diagnostic

	// Snapshot is the package the plugin was loaded from.
	Snapshot *snapshot.Snapshot
}

// Author is the manifest's author object.
type Author struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// Skill is a valid skill discovered under skills/.
type Skill struct {
	ID   string // canonical ID: PLUGIN/SKILL
	Path string // package path of its SKILL.md, e.g. "skills/deploy/SKILL.md"
	Dir  string // package path of its directory, e.g. "skills/deploy"
	// Skill is the parsed SKILL.md; its Files are the skill's other
	// files, keyed by skill-relative path ("references/rules.md"), as
	// skill.LoadDir gives them.
	*skill.Skill
}

// MCPState tells what became of mcp.json.
type MCPState string

// The states of a plugin's MCP configuration.
const (
	MCPAbsent     MCPState = "absent"     // no mcp.json
	MCPConfigured MCPState = "configured" // mcp.json valid at the top level
	MCPDisabled   MCPState = "disabled"   // mcp.json present but invalid or unsupported
)

// Transport is an MCP server's declared transport.
type Transport string

// The transports of spec section 7.2.1.
const (
	Stdio          Transport = "stdio"
	StreamableHTTP Transport = "streamable-http"
	SSE            Transport = "sse"
)

// AllTransports lists every transport the specification defines.
var AllTransports = []Transport{Stdio, StreamableHTTP, SSE}

// Server is a valid MCP server entry. Values are exactly as configured:
// placeholders are not expanded here (that is mcprun's job at launch).
type Server struct {
	ID   string // canonical ID: PLUGIN/SERVER
	Name string
	Type Transport
	// Raw is the entry's original JSON object.
	Raw json.RawMessage

	// stdio fields.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string // "" when omitted

	// streamable-http and sse fields.
	URL     string
	Headers map[string]string
}

// Options control Load. The zero value loads with every transport
// supported, default limits and non-strict skills.
type Options struct {
	// Transports are the MCP transports the client supports; nil means all.
	// A valid entry of another transport is skipped with a warning.
	Transports []Transport
	// StrictSkills makes an unknown SKILL.md frontmatter key, and a skill
	// name with letters or digits outside ASCII, errors that skip the
	// skill, instead of warnings (skill.Options.Strict).
	StrictSkills bool
	// Limits bound the work and the diagnostics of one load.
	Limits Limits
	// Read says how LoadDir reads the directory (snapshot.ReadDir's
	// limits and strictness); Load, given a snapshot, does not use it.
	Read snapshot.Options
}

// Load validates a snapshot as an Agent Plugins package.
//
// It returns a *RejectedError (matching ErrRejected) when the specification
// requires the plugin to be rejected; otherwise the Package, whose
// Diagnostics hold every non-fatal problem.
func Load(s *snapshot.Snapshot, opts Options) (*Package, error) {
	l := newLoader(s, opts)
	return l.load()
}

// LoadDir reads a plugin directory with snapshot.ReadDir (as opts.Read
// says) and loads it. An I/O error or a snapshot limit is returned as is;
// a rejection is a *RejectedError.
func LoadDir(dir string, opts Options) (*Package, error) {
	s, err := snapshot.ReadDir(dir, opts.Read)
	if err != nil {
		return nil, err
	}
	return Load(s, opts)
}
