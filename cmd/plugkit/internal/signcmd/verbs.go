// Package signcmd holds the verbs that sign and verify plugins with Sigstore
// bundles: sign, verify, attest and key.
package signcmd

import (
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// Verbs are the verbs of this package, by name.
func Verbs() command.Verbs {
	return command.Verbs{
		"attest": NewCmdAttest,
		"key":    NewCmdKey,
		"sign":   NewCmdSign,
		"verify": NewCmdVerify,
	}
}
