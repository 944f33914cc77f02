package signcmd

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/internal/atomicfile"
	"github.com/plugkit/plugkit/trust"
)

// keyResult is key generate's --json document.
type keyResult struct {
	PrivateKey string `json:"privateKey"`
	PublicKey  string `json:"publicKey"`
	KeyID      string `json:"keyId"`
}

// NewCmdKey builds plugkit key, which runs with fac.
func NewCmdKey(fac *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "key",
		Short: "Manage signing keys",
		Long:  "Key manages the key pairs sign, attest and verify use (see docs/trust.md).",
	}
	cmd.AddCommand(newKeyGenerateCmd(fac))
	return cmd
}

// keyGenerateOptions are the flags of plugkit key generate.
type keyGenerateOptions struct {
	prefix string
	force  bool
	asJSON bool
}

func newKeyGenerateCmd(fac *factory.Factory) *cobra.Command {
	opts := &keyGenerateOptions{}
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write a new key pair in cosign's format",
		Long: `Generate writes a new ECDSA P-256 key pair, as cosign generate-key-pair
does: PREFIX.key, the private key encrypted with a password (scrypt and NaCl
secretbox, "ENCRYPTED SIGSTORE PRIVATE KEY", mode 0600), and PREFIX.pub, the
public key (PEM). The default prefix is "cosign".

The password comes from COSIGN_PASSWORD when it is set (even empty), or is
asked twice on the terminal; never from the command line. Existing files are
replaced only with --force, and together: both new files are written and
synced before either replaces an old one, so on a failure neither new file
is left and an existing pair stays as it was.

Exit status: 0 written, 1 refused (a file exists, the passwords differ),
2 usage or I/O error.`,
		Example: `  plugkit key generate                                   # cosign.key and cosign.pub
  plugkit key generate --output-key-prefix keys/release
  COSIGN_PASSWORD= plugkit key generate --output-key-prefix ci --json   # empty password, for CI`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.prefix == "" {
				return command.Usagef("--output-key-prefix must not be empty")
			}
			privPath, pubPath := opts.prefix+".key", opts.prefix+".pub"
			for _, p := range []string{privPath, pubPath} {
				if _, err := os.Lstat(p); err == nil && !opts.force {
					return command.Failed(fmt.Errorf("%s exists: --force replaces it", p))
				}
			}
			pw, err := readPassword(fac, cmd, true)
			if err != nil {
				return err
			}
			priv, pub, err := trust.GenerateKeyPair(pw)
			if err != nil {
				return command.Failed(err)
			}
			k, err := trust.ParsePublicKey(pubPath, pub)
			if err != nil {
				return command.Failed(err)
			}
			if err := writeKeyPair(privPath, priv, pubPath, pub); err != nil {
				return command.Usage(err)
			}
			res := keyResult{PrivateKey: privPath, PublicKey: pubPath, KeyID: k.ID}
			return command.Output(cmd, opts.asJSON, res, func(w io.Writer) {
				command.Printf(w, "Private key written to %s\nPublic key written to %s\n", privPath, pubPath)
			})
		},
	}
	cmd.Flags().StringVar(&opts.prefix, "output-key-prefix", "cosign", "write PREFIX.key and PREFIX.pub (cosign's flag)")
	cmd.Flags().BoolVar(&opts.force, "force", false, "replace existing key files")
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print one JSON document")
	return cmd
}

// writeKeyPair puts both files in place together: both are written and
// synced to temporary siblings before either is renamed, so a failure
// (a full disk, a directory in the way) leaves an existing pair as it was
// rather than a new .pub beside an old .key.
func writeKeyPair(privPath string, priv []byte, pubPath string, pub []byte) error {
	privFile, err := atomicfile.Create(privPath, 0o600)
	if err != nil {
		return err
	}
	defer privFile.Abort()
	if _, err := privFile.Write(priv); err != nil {
		return err
	}
	pubFile, err := atomicfile.Create(pubPath, 0o644)
	if err != nil {
		return err
	}
	defer pubFile.Abort()
	if _, err := pubFile.Write(pub); err != nil {
		return err
	}
	return atomicfile.CommitAll(privFile, pubFile)
}
