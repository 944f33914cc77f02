package signcmd

import (
	"fmt"
	"io"
	"os"

	"github.com/opencontainers/go-digest"
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/internal/atomicfile"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/trust"
)

// signFileResult is sign's --json document for a file.
type signFileResult struct {
	File   string `json:"file"`
	Digest string `json:"digest"`
	Bundle string `json:"bundle"`
	Key    keyRef `json:"key"`
}

// signOptions are the flags of plugkit sign.
type signOptions struct {
	oci        remote.OCIFlags
	keyPath    string
	bundlePath string
	force      bool
}

// NewCmdSign builds plugkit sign, which runs with fac.
func NewCmdSign(fac *factory.Factory) *cobra.Command {
	opts := &signOptions{}
	cmd := &cobra.Command{
		Use:   "sign REF|FILE --key KEY",
		Short: "Sign a plugin in an OCI registry or layout, or any file, as cosign does",
		Long: `Sign signs what REF names and attaches the signature beside it, exactly as
cosign v3 does, so that cosign and plugkit each verify the other's
signatures.

REF is oci://REGISTRY/REPOSITORY[:TAG][@DIGEST] or oci-layout:DIR[:TAG][@DIGEST]
naming a plugin. The plugin is read and checked as pull checks it, and its
manifest digest is signed (a tag is resolved once; the signature binds the
digest): a Sigstore bundle v0.3 holding a DSSE envelope over an in-toto
statement (predicate https://sigstore.dev/cosign/sign/v1), attached as an OCI
1.1 referrer of the manifest. On a registry without the referrers API the
referrers tag schema is used, and the signature is read back and added again
if a concurrent signer dropped it (see docs/trust.md). An air-gap tar is
read-only: sign the layout or registry it came from, then export again.

FILE (a plugin archive, or any file) gets a detached bundle, what cosign
sign-blob --new-bundle-format --bundle writes: FILE.sigstore.json, or
--bundle PATH. An existing bundle is replaced only with --force.

--key is a cosign key file (plugkit key generate, cosign generate-key-pair),
its password from COSIGN_PASSWORD or a prompt, or an unencrypted PKCS#8 PEM
key (ECDSA, Ed25519, RSA).

Exit status: 0 signed, 1 refused (not a plugin, wrong password, signature
kept being dropped), 2 usage, network or I/O error.`,
		Example: `  plugkit sign oci://ghcr.io/acme/release-notes:1.2.0 --key cosign.key
  COSIGN_PASSWORD= plugkit sign oci://127.0.0.1:5000/plugins/rn:1.2.0 --key cosign.key --plain-http --json
  plugkit sign oci-layout:./layout:1.2.0 --key ed25519.pem
  plugkit sign release-notes-1.2.0.tar.gz --key cosign.key        # writes release-notes-1.2.0.tar.gz.sigstore.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if oci.IsReference(args[0]) {
				if opts.bundlePath != "" || opts.force {
					return command.Usagef("--bundle and --force are for signing a file; a plugin's signature is attached beside it in the registry or layout")
				}
				return signOCI(fac, cmd, &opts.oci, args[0], opts.keyPath, nil)
			}
			return signFile(fac, cmd, &opts.oci, args[0], opts.keyPath, opts.bundlePath, opts.force)
		},
	}
	opts.oci.Register(fac, cmd)
	cmd.Flags().StringVar(&opts.keyPath, "key", "", "private key file (cosign's encrypted format, or PKCS#8 PEM)")
	cmd.Flags().StringVar(&opts.bundlePath, "bundle", "", "where to write a file's bundle (default FILE.sigstore.json)")
	cmd.Flags().BoolVar(&opts.force, "force", false, "replace an existing bundle file")
	return cmd
}

// signFile writes a detached bundle for a file.
func signFile(fac *factory.Factory, cmd *cobra.Command, f *remote.OCIFlags, file, keyPath, bundlePath string, force bool) error {
	fi, err := os.Stat(file)
	switch {
	case err != nil:
		return command.Usage(err)
	case fi.IsDir():
		return command.Usagef("%s is a directory: pack it (plugkit pack) and sign the archive, or push it and sign the artifact", file)
	case !fi.Mode().IsRegular():
		return command.Usagef("%s is not a regular file", file)
	}
	if bundlePath == "" {
		bundlePath = file + ".sigstore.json"
	}
	if _, err := os.Lstat(bundlePath); err == nil && !force {
		return command.Failed(fmt.Errorf("%s exists: --force replaces it", bundlePath))
	}
	key, err := loadSigningKey(fac, cmd, keyPath)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return command.Usage(err)
	}
	b, err := trust.SignBlob(cmd.Context(), data, key)
	if err != nil {
		return command.Failed(err)
	}
	if err := atomicfile.Write(bundlePath, b, 0o644); err != nil {
		return command.Usage(err)
	}
	res := signFileResult{File: file, Digest: digest.FromBytes(data).String(), Bundle: bundlePath, Key: keyRef{Path: keyPath, KeyID: key.Public.ID}}
	return command.Output(cmd, f.JSON, res, func(w io.Writer) {
		command.Printf(w, "signed %s (%s)\nbundle: %s\nkey:    %s (%s)\n", res.File, res.Digest, res.Bundle, res.Key.Path, res.Key.KeyID)
	})
}
