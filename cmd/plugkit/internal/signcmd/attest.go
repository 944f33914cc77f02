package signcmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/internal/boundedfile"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/trust"
)

// attestOptions are the flags of plugkit attest.
type attestOptions struct {
	oci           remote.OCIFlags
	keyPath       string
	predicatePath string
	predicateType string
}

// NewCmdAttest builds plugkit attest, which runs with fac.
func NewCmdAttest(fac *factory.Factory) *cobra.Command {
	opts := &attestOptions{}
	cmd := &cobra.Command{
		Use:   "attest REF --predicate FILE --type URI --key KEY",
		Short: "Attach a signed in-toto attestation (SLSA provenance, an SBOM, …) to a plugin",
		Long: `Attest signs an in-toto statement about the plugin REF names and attaches
it beside the plugin, as cosign attest --new-bundle-format does: the
statement's subject is the plugin's manifest digest, its predicate the JSON
object in --predicate FILE, its predicate type --type. The bundle and the
referrer have the shape of a signature's (sign), with the predicate type in
the dev.sigstore.bundle.predicateType annotation.

REF is oci://REGISTRY/REPOSITORY[:TAG][@DIGEST] or oci-layout:DIR[:TAG][@DIGEST];
the plugin is read and checked as pull checks it. --type is an absolute URI
or one of cosign's shorthands: slsaprovenance (v0.2), slsaprovenance1,
spdx, spdxjson, cyclonedx, vuln, openvex, custom. plugkit verify --type
checks an attestation. --key and its password as for sign.

Exit status: 0 attached, 1 refused (not a plugin, predicate not a JSON
object, wrong password), 2 usage, network or I/O error.`,
		Example: `  plugkit attest oci://ghcr.io/acme/release-notes:1.2.0 --predicate provenance.json --type slsaprovenance1 --key cosign.key
  plugkit attest oci-layout:./layout:1.2.0 --predicate sbom.spdx.json --type https://spdx.dev/Document --key cosign.key --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !oci.IsReference(args[0]) {
				return command.Usagef("attest takes an oci:// or oci-layout: reference to a plugin, not %q", args[0])
			}
			if opts.predicatePath == "" || opts.predicateType == "" {
				return command.Usagef("--predicate FILE and --type URI are required")
			}
			pt, err := trust.PredicateType(opts.predicateType)
			if err != nil {
				return command.Usage(err)
			}
			pred, err := readPredicate(opts.predicatePath)
			if err != nil {
				return err
			}
			return signOCI(fac, cmd, &opts.oci, args[0], opts.keyPath, &trust.SignOptions{PredicateType: pt, Predicate: pred})
		},
	}
	opts.oci.Register(fac, cmd)
	cmd.Flags().StringVar(&opts.keyPath, "key", "", "private key file (cosign's encrypted format, or PKCS#8 PEM)")
	cmd.Flags().StringVar(&opts.predicatePath, "predicate", "", "the predicate: a file holding a JSON object")
	cmd.Flags().StringVar(&opts.predicateType, "type", "", "the predicate type: an absolute URI or a cosign shorthand (slsaprovenance1, spdxjson, …)")
	return cmd
}

// readPredicate reads a predicate file, bounded by what a bundle may hold.
func readPredicate(path string) ([]byte, error) {
	b, err := boundedfile.Read(path, trust.DefaultMaxBundleBytes, "MaxBundleBytes")
	if errors.Is(err, snapshot.ErrLimit) {
		return nil, command.Failed(err)
	}
	if err != nil {
		return nil, command.Usage(err)
	}
	if err := trust.CheckPredicate(b); err != nil {
		return nil, command.Failed(fmt.Errorf("%s: %w", path, err))
	}
	return b, nil
}
