package agentplugin

// specVersion is one Agent Plugins release this loader implements. Adding
// a release (or declaring one compatible, as spec section 5.2 allows) is one
// more entry in specVersions.
type specVersion struct {
	Version        string
	ManifestSchema string // canonical plugin.json $schema
	MCPSchema      string // canonical mcp.json $schema
}

// specVersions is the table of supported Agent Plugins versions. Nothing is
// ever fetched: a $schema is only looked up here.
var specVersions = []specVersion{
	{
		Version:        "1.0.0",
		ManifestSchema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
		MCPSchema:      "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
	},
}

// SupportedVersions lists the Agent Plugins versions Load implements.
func SupportedVersions() []string {
	vs := make([]string, len(specVersions))
	for i, v := range specVersions {
		vs[i] = v.Version
	}
	return vs
}

func versionByManifestSchema(id string) *specVersion {
	for i := range specVersions {
		if specVersions[i].ManifestSchema == id {
			return &specVersions[i]
		}
	}
	return nil
}

func versionByMCPSchema(id string) *specVersion {
	for i := range specVersions {
		if specVersions[i].MCPSchema == id {
			return &specVersions[i]
		}
	}
	return nil
}

// SchemaIDs are the canonical $schema identifiers of one supported Agent
// Plugins version, for tools that write plugins (plugkit init).
type SchemaIDs struct {
	Manifest string // plugin.json
	MCP      string // mcp.json
}

// Schemas returns the $schema identifiers of a supported version, and
// whether it is supported.
func Schemas(version string) (SchemaIDs, bool) {
	for _, v := range specVersions {
		if v.Version == version {
			return SchemaIDs{Manifest: v.ManifestSchema, MCP: v.MCPSchema}, true
		}
	}
	return SchemaIDs{}, false
}
