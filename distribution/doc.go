// Package distribution is the client of the Backplane plugin distribution
// protocol, and the protocol's wire types, which the registry server shares.
//
// The protocol lives under the prefix /plugin-protocol/v1 of a base URL and
// is documented in docs/protocol.md: a catalog of plugins and their release
// channels, resolve (plugin and channel, or plugin and release, to one
// release and its artifact digest), artifacts fetched by their exact sha256
// digest, installation reports, and publishing.
//
// A Client downloads an artifact, checks that the bytes hash to the digest it
// asked for before anything else looks at them, and only then unpacks them
// with archive.Unpack and validates them with agentplugin.Load: a registry
// that serves tampered bytes is caught before a single file is interpreted.
//
// This is Backplane's API, not an official Agent Plugins registry protocol.
package distribution
