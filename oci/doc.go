// Package oci stores Agent Plugins as OCI artifacts, in registries and in
// OCI image layouts, with the profile Colossus defines, so that plugkit and
// Colossus read each other's artifacts.
//
// # The profile
//
// One plugin is one OCI image manifest (schemaVersion 2, media type
// application/vnd.oci.image.manifest.v1+json) with artifactType
// ArtifactType. Its config (ConfigMediaType) is the JSON
//
//	{"schemaVersion":1,"name":NAME,"version":VERSION or null,"pluginSchema":"the plugin.json $schema"}
//
// and it has exactly one layer (LayerMediaType): the deterministic archive
// of package archive with every entry under NAME/, annotated
// org.opencontainers.image.title NAME.tar.gz so that `oras pull` writes it
// as a file. The manifest carries the annotations title, description,
// version, licenses and source from plugin.json where present, and created
// only when the builder is given a time (SOURCE_DATE_EPOCH): the same
// plugin always gives the same manifest digest, on any machine. That
// digest is the plugin's identity.
//
// # Reading
//
// Pull resolves a reference and refuses, before the content is used and
// without writing anything: an image index or a Docker manifest list
// (ErrIndex), any other media type or artifactType, or a layer count or
// type other than the profile's (ErrNotPlugin), a manifest, config or
// layer whose size or digest differs from its descriptor (ErrDescriptor),
// one over its limit (a *LimitError), a config that disagrees with the
// plugin.json inside (ErrConfig), a layer with an entry outside NAME/
// (archive.ErrOutsideRoot), and everything archive.Unpack and
// agentplugin.Load refuse. Layers may carry GNU-magic tar headers
// (archive.UnpackOptions.GNUMagic); nothing else is relaxed.
//
// # Where plugins are
//
// A Reference names a plugin in a registry (oci://REGISTRY/REPOSITORY
// [:TAG][@DIGEST]) or in an OCI image layout, a directory or a tar of one
// (oci-layout:PATH[:TAG][@DIGEST]). Open gives the oras-go target behind
// it: a registry repository through oras-go's remote client (HTTPS unless
// PlainHTTP, credentials from the Docker config and its helpers, the
// referrers tag schema where the registry has no referrers API), or a
// layout, read and written by this package: opening one reads every
// manifest reachable from index.json once, within MaxManifestBytes; blobs
// are written to a temporary sibling, synced and renamed into place, and
// Close replaces index.json atomically, sorted. A layout whose index lists
// several plugin manifests can only be read by exact digest.
//
// Copy carries a plugin and all its referrers (signatures, attestations,
// transitively) between targets with digests unchanged; Export writes
// plugins, their blobs and their referrers as one deterministic OCI layout
// tar for air-gapped registries. Export checks what it carries (each plugin
// manifest against the profile, its config, the size and digest of every
// blob it writes, the limits) but, unless ExportOptions.Check, not the
// archive inside the layer: whoever imports the tar reads it as Pull does.
package oci
