package agentplugin

// AddVersionForTest registers an extra supported version, so that tests can
// show rules (such as the version mismatch of spec 10.1) that one version
// cannot. It returns a function that restores the table.
func AddVersionForTest(version, manifestSchema, mcpSchema string) (restore func()) {
	saved := specVersions
	specVersions = append(append([]specVersion(nil), specVersions...), specVersion{version, manifestSchema, mcpSchema})
	return func() { specVersions = saved }
}
