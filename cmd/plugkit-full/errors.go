package main

import (
	"errors"

	"github.com/plugkit/plugkit/internal/cli"
	"github.com/plugkit/plugkit/trust"
)

// Error codes of the --json failure document that only the verbs of
// plugkit-full give; the others are in package cli. They are a stable
// interface, listed in docs/cli.md: add codes, never rename them.
const ( // Codes of the verbs that change a plugin home (install, update,
	// remove, sync) and check it.
	codeConsent        = "consent-required" // a change needs consent that was refused or not given
	codeConflict       = "name-conflict"    // a plugin of that name is installed from another source
	codeNotInstalled   = "not-installed"    // no installed plugin has that name
	codeBusy           = "home-busy"        // another plugkit kept the home locked
	codeSourceChanged  = "source-changed"   // a source gives other bytes than the lock records
	codeModified       = "tree-modified"    // an installed tree differs from its file list or the lock
	codeLockInvalid    = "lock-invalid"     // plugkit.lock cannot be read as a lock file
	codePolicyMismatch = "policy-mismatch"  // the home holds another trust policy than the lock records
	codePolicyMissing  = "policy-missing"   // the lock records a trust policy and the home has none
	codeLockMismatch   = "lock-mismatch"    // a tree holds another plugin, version or launch surface than its lock entry

	// Codes of the signing verbs (key generate, sign, attest, verify).
	codeNotVerified   = "not-verified"   // no valid signature satisfies what verify was asked
	codePolicyRefused = "policy-refused" // the trust policy refuses the plugin
	codePolicyInvalid = "policy-invalid" // the trust policy file cannot be used
	codePassword      = "wrong-password" // an encrypted private key did not open with the password
)

func init() { cli.RegisterErrorCode(trustErrorCode) }

// trustErrorCode names the errors of package trust, which the light
// plugkit does not link.
func trustErrorCode(err error) string {
	switch {
	case errors.Is(err, trust.ErrNotVerified):
		return codeNotVerified
	case errors.Is(err, trust.ErrRefused):
		return codePolicyRefused
	case errors.Is(err, trust.ErrPassword):
		return codePassword
	}
	return ""
}
