// Package trust signs and verifies plugins the way cosign v3 does, and
// decides which plugins may be installed on what evidence.
//
// Signatures are standard Sigstore bundles (v0.3), made and checked with
// sigstore-go; this package writes no cryptography of its own. An OCI
// plugin's signature is a DSSE envelope over an in-toto statement whose
// subject is the plugin manifest's digest, attached to the manifest as an
// OCI 1.1 referrer with cosign's manifest shape and annotations, so that
// `cosign verify` accepts plugkit's signatures and plugkit accepts cosign's.
// Every operation works on oras-go targets, so one algorithm serves a
// registry, an OCI layout directory and an air-gap layout tar, offline. A
// file (a plugin archive) gets a detached bundle, FILE.sigstore.json, as
// `cosign sign-blob --new-bundle-format --bundle` writes.
//
// Keys are PKCS#8 PEM (ECDSA, Ed25519) or cosign's encrypted key files.
// Keyless signatures are checked against a Sigstore trusted root read from
// disk and a certificate identity; nothing is ever fetched.
//
// A Policy is Colossus's trust methods as data: an ordered list of rules,
// each a plugin-name glob and a method (sigstore-key, sigstore-identity,
// digest, local-directory). Policy.Admit decides for an installer, naming
// the rule and the signer. docs/trust.md documents the file format and
// PolicySchema is its JSON Schema.
package trust
