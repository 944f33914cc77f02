package signcmd

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/opencontainers/go-digest"
	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/internal/boundedfile"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"
	"github.com/plugkit/plugkit/trust"
)

// verifyResult is verify's --json document, on success and on refusal
// (with error set); each candidate signature is listed with its reason.
type verifyResult struct {
	Error         *command.ErrorDetail     `json:"error,omitempty"`
	Diagnostics   []agentplugin.Diagnostic `json:"diagnostics"`
	Reference     string                   `json:"reference"`
	Digest        string                   `json:"digest"`
	Name          string                   `json:"name,omitempty"`
	Version       string                   `json:"version,omitempty"`
	Verified      bool                     `json:"verified"`
	PredicateType string                   `json:"predicateType,omitempty"`
	Signatures    []trust.Signature        `json:"signatures"`
	Skipped       int                      `json:"skipped,omitempty"`
	Unchecked     int                      `json:"unchecked,omitempty"`
	Unread        int                      `json:"unread,omitempty"`
	// Decision is the trust policy's, with --policy.
	Decision *trust.Decision `json:"decision,omitempty"`
}

// verifyFlags say whom verify trusts.
type verifyFlags struct {
	keys                           []string
	identity, identityRegexp       string
	issuer, issuerRegexp           string
	trustedRoot, policy, predicate string
	bundle                         string
	limits                         trust.Limits
}

// verifyOptions are the flags of plugkit verify.
type verifyOptions struct {
	oci   remote.OCIFlags
	trust verifyFlags
}

// NewCmdVerify builds plugkit verify, which runs with fac.
func NewCmdVerify(fac *factory.Factory) *cobra.Command {
	opts := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify REF|FILE|DIR",
		Short: "Check a plugin's signatures, offline, against keys, identities or a trust policy",
		Long: `Verify checks that what REF names carries a valid signature by someone you
trust, the way cosign verify does, without fetching anything but REF.

REF is oci://REGISTRY/REPOSITORY[:TAG][@DIGEST] or oci-layout:PATH[:TAG][@DIGEST]
(a layout directory or an air-gap tar): the plugin is read and checked as
pull checks it, and its Sigstore bundle referrers are checked: a DSSE
statement whose subject is the plugin's manifest digest, of the predicate
type asked for (a signature, or --type URI for an attestation), signed by
whom you trust. A FILE is checked against its detached bundle
(FILE.sigstore.json, or --bundle); a DIR only against a --policy.

The referrers of REF's manifest are those the registry lists (by the
referrers API, else the referrers tag schema) or the layout holds. One
listed with a Sigstore bundle artifactType is a candidate; one listed with
a type known to be something else (an SBOM, a Notary signature) is
skipped; one listed with no artifactType or an unknown one (some registries
list the config's media type there, and a layout lists none) is read, as
cosign reads every referrer, and judged by its manifest: by its
artifactType, else its config's media type, else its layers'. At most
--max-unknown-referrers are read so; more are reported unread.

Whom you trust:
  --key FILE                 a public key (repeatable: any one will do)
  --certificate-identity[-regexp] and --certificate-oidc-issuer[-regexp]
                             a keyless signer, with --trusted-root FILE, the
                             Sigstore trusted root JSON (nothing is fetched)
  --policy FILE              a trust policy (docs/trust.md), which names the
                             rule and the signer that admit the plugin

Exit status: 0 at least one valid signature satisfies what was asked;
1 none does (each candidate's reason is printed, and is in --json), or the
policy refuses the plugin; 2 usage, network or I/O error, or a policy file
that cannot be used.`,
		Example: `  plugkit verify oci://ghcr.io/acme/release-notes:1.2.0 --key cosign.pub
  plugkit verify oci-layout:airgap.tar:1.2.0 --key cosign.pub --json
  plugkit verify oci://ghcr.io/acme/tools:1.0.0 \
      --certificate-identity-regexp '^https://github.com/acme/' \
      --certificate-oidc-issuer https://token.actions.githubusercontent.com \
      --trusted-root trusted_root.json
  plugkit verify oci://ghcr.io/acme/release-notes:1.2.0 --key cosign.pub --type slsaprovenance1
  plugkit verify release-notes-1.2.0.tar.gz --key cosign.pub     # reads release-notes-1.2.0.tar.gz.sigstore.json
  plugkit verify ./my-plugin --policy policy.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd, &opts.oci, &opts.trust, args[0])
		},
	}
	opts.oci.Register(fac, cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.trust.keys, "key", nil, "a trusted public key file (repeatable)")
	fl.StringVar(&opts.trust.identity, "certificate-identity", "", "keyless: the certificate's subject (SAN), exactly")
	fl.StringVar(&opts.trust.identityRegexp, "certificate-identity-regexp", "", "keyless: a Go regexp the certificate's subject matches")
	fl.StringVar(&opts.trust.issuer, "certificate-oidc-issuer", "", "keyless: the OIDC issuer, exactly")
	fl.StringVar(&opts.trust.issuerRegexp, "certificate-oidc-issuer-regexp", "", "keyless: a Go regexp the OIDC issuer matches")
	fl.StringVar(&opts.trust.trustedRoot, "trusted-root", "", "keyless: the Sigstore trusted root JSON file")
	fl.StringVar(&opts.trust.policy, "policy", "", "a trust policy file (JSON or YAML)")
	fl.StringVar(&opts.trust.predicate, "type", "", "check an attestation of this predicate type (URI or cosign shorthand) instead of a signature")
	fl.StringVar(&opts.trust.bundle, "bundle", "", "a FILE's bundle (default FILE.sigstore.json)")
	fl.IntVar(&opts.trust.limits.MaxSignatures, "max-signatures", trust.DefaultMaxSignatures, "check at most this many signatures of a plugin (more are reported unchecked)")
	fl.IntVar(&opts.trust.limits.MaxUnknownReferrers, "max-unknown-referrers", trust.DefaultMaxUnknownReferrers, "read at most this many referrers listed with no or an unknown artifactType (more are reported unread)")
	fl.Int64Var(&opts.trust.limits.MaxBundleBytes, "max-bundle-bytes", trust.DefaultMaxBundleBytes, "refuse a bundle larger than this")
	return cmd
}

func runVerify(cmd *cobra.Command, f *remote.OCIFlags, v *verifyFlags, arg string) error {
	if v.limits.MaxSignatures <= 0 || v.limits.MaxUnknownReferrers <= 0 || v.limits.MaxBundleBytes <= 0 {
		return command.Usagef("--max-signatures, --max-unknown-referrers and --max-bundle-bytes must be positive")
	}
	var policy *trust.Policy
	var verifier *trust.Verifier
	var err error
	if v.policy != "" {
		if len(v.keys) > 0 || v.identity != "" || v.identityRegexp != "" || v.issuer != "" || v.issuerRegexp != "" || v.trustedRoot != "" || v.predicate != "" {
			return command.Usagef("--policy decides alone: drop --key, the --certificate flags, --trusted-root and --type")
		}
		if policy, err = trust.LoadPolicy(v.policy); err != nil {
			return command.WithCode(command.CodePolicyInvalid, command.Usage(err))
		}
		policy.Limits = v.limits
	} else if verifier, err = v.verifier(); err != nil {
		return err
	}

	res := &verifyResult{Reference: arg, Signatures: []trust.Signature{}, Diagnostics: []agentplugin.Diagnostic{}}
	var rep *trust.Report
	switch {
	case oci.IsReference(arg):
		rep, err = verifyOCI(cmd, f, arg, policy, verifier, res)
	default:
		rep, err = verifyPath(cmd, v, arg, policy, verifier, res)
	}
	if rep != nil {
		res.PredicateType, res.Signatures, res.Skipped, res.Unchecked, res.Unread = rep.PredicateType, rep.Signatures, rep.Skipped, rep.Unchecked, rep.Unread
	}
	if err == nil {
		res.Verified = true
		return command.Output(cmd, f.JSON, res, func(w io.Writer) { printVerify(w, res) })
	}
	if !errors.Is(err, trust.ErrNotVerified) && !errors.Is(err, trust.ErrRefused) {
		return err
	}
	// A refusal is a result too: print it whole, with every reason.
	code := command.CodeNotVerified
	if errors.Is(err, trust.ErrRefused) {
		code = command.CodePolicyRefused
	}
	if f.JSON {
		res.Error = &command.ErrorDetail{Code: code, Message: err.Error()}
		if werr := command.WriteJSON(cmd.OutOrStdout(), res); werr != nil {
			return command.Usage(werr)
		}
		return command.Failed(nil)
	}
	printVerify(cmd.OutOrStdout(), res)
	return command.WithCode(code, command.Failed(err))
}

// verifier builds the Verifier of the --key and keyless flags.
func (v *verifyFlags) verifier() (*trust.Verifier, error) {
	ver := &trust.Verifier{Limits: v.limits}
	for _, k := range v.keys {
		pub, err := trust.LoadPublicKey(k)
		if err != nil {
			if command.IsIOError(err) {
				return nil, command.Usage(err)
			}
			return nil, command.Usage(fmt.Errorf("--key: %w", err))
		}
		ver.Keys = append(ver.Keys, pub)
	}
	keyless := v.identity != "" || v.identityRegexp != "" || v.issuer != "" || v.issuerRegexp != "" || v.trustedRoot != ""
	if keyless {
		id := trust.Identity{Subject: v.identity, SubjectRegexp: v.identityRegexp, Issuer: v.issuer, IssuerRegexp: v.issuerRegexp}
		if err := id.Check(); err != nil {
			return nil, command.Usagef("keyless: %v (--certificate-identity or --certificate-identity-regexp, and --certificate-oidc-issuer or --certificate-oidc-issuer-regexp)", err)
		}
		if v.trustedRoot == "" {
			return nil, command.Usagef("keyless: --trusted-root FILE is required (the Sigstore trusted root JSON; nothing is fetched)")
		}
		tr, err := trust.LoadTrustedRoot(v.trustedRoot)
		if err != nil {
			return nil, command.Usage(err)
		}
		ver.Identities, ver.TrustedRoot = []trust.Identity{id}, tr
	}
	if len(ver.Keys) == 0 && !keyless {
		return nil, command.Usagef("say whom you trust: --key FILE, the --certificate-identity and --certificate-oidc-issuer flags with --trusted-root, or --policy FILE")
	}
	if v.predicate != "" {
		pt, err := trust.PredicateType(v.predicate)
		if err != nil {
			return nil, command.Usage(err)
		}
		ver.PredicateType = pt
	}
	return ver, nil
}

// verifyOCI checks the signatures of an OCI plugin, or admits it by policy.
func verifyOCI(cmd *cobra.Command, f *remote.OCIFlags, arg string, policy *trust.Policy, verifier *trust.Verifier, res *verifyResult) (*trust.Report, error) {
	ref, err := remote.ParseOCIRef(arg, "reference")
	if err != nil {
		return nil, err
	}
	store, p, err := openPlugin(cmd.Context(), f, ref, false)
	if err != nil {
		return nil, command.Explain(cmd, err)
	}
	defer store.Close()
	res.Reference, res.Digest, res.Name, res.Version = ref.String(), p.Descriptor.Digest.String(), p.Package.Name, p.Package.Version
	if policy != nil {
		return admit(cmd, policy, res, &trust.Candidate{Name: p.Package.Name, Source: trust.SourceOCI, Digest: p.Descriptor.Digest, Store: store, Manifest: p.Descriptor})
	}
	rep, err := verifier.VerifyOCI(cmd.Context(), store, p.Descriptor)
	if err != nil && !errors.Is(err, trust.ErrNotVerified) {
		return nil, remote.OCIFailure(ref, err)
	}
	return rep, err
}

// verifyPath checks a file against its detached bundle, or admits a
// plugin directory or archive by policy.
func verifyPath(cmd *cobra.Command, v *verifyFlags, path string, policy *trust.Policy, verifier *trust.Verifier, res *verifyResult) (*trust.Report, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, command.Usage(err)
	}
	bundlePath := v.bundle
	if bundlePath == "" {
		bundlePath = path + ".sigstore.json"
	}
	if policy != nil {
		p, err := input.OpenSource(cmd.Context(), path, source.ParseOptions{}, source.Options{})
		if err != nil {
			return nil, command.Explain(cmd, err)
		}
		id, err := input.SourceDigest(p)
		if err != nil {
			return nil, command.Failed(err)
		}
		c := &trust.Candidate{Name: p.Package.Name, Digest: digest.Digest(id), Source: trust.SourceArchive, Archive: p.Archive}
		if fi.IsDir() {
			c.Source, c.Dir, c.Archive = trust.SourceDirectory, path, nil
		} else if b, err := readBundleFile(bundlePath, v.bundle != "", v.limits.MaxBundleBytes); err != nil {
			return nil, err
		} else if b != nil {
			c.Bundles = [][]byte{b}
		}
		res.Digest, res.Name, res.Version = id, p.Package.Name, p.Package.Version
		return admit(cmd, policy, res, c)
	}
	if fi.IsDir() {
		return nil, command.Usagef("%s is a directory, which carries no signature: verify it with --policy (a local-directory or digest rule), or verify its archive or artifact", path)
	}
	b, err := readBundleFile(bundlePath, true, v.limits.MaxBundleBytes)
	if err != nil {
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, command.Usage(err)
	}
	defer file.Close()
	rep, err := verifier.VerifyBlob(file, b)
	if rep != nil {
		res.Digest = rep.Subject.String()
	}
	if err != nil && !errors.Is(err, trust.ErrNotVerified) {
		return nil, command.Usage(err)
	}
	return rep, err
}

// readBundleFile reads a detached bundle; a missing one is nil unless
// required.
func readBundleFile(path string, required bool, limit int64) ([]byte, error) {
	b, err := boundedfile.Read(path, limit, "MaxBundleBytes")
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, os.ErrNotExist) && !required:
		return nil, nil
	case errors.Is(err, snapshot.ErrLimit):
		return nil, command.Failed(err)
	case errors.Is(err, os.ErrNotExist):
		return nil, command.Usage(fmt.Errorf("%w (a file's signature is its bundle: sign it with plugkit sign FILE, or give --bundle)", err))
	}
	return nil, command.Usage(err)
}

// admit applies the policy and records its decision in res.
func admit(cmd *cobra.Command, policy *trust.Policy, res *verifyResult, c *trust.Candidate) (*trust.Report, error) {
	d, err := policy.Admit(cmd.Context(), c)
	res.Decision = d
	if err != nil && !errors.Is(err, trust.ErrRefused) {
		return nil, command.Usage(err)
	}
	return d.Report, err
}

// printVerify prints the outcome and each candidate signature.
func printVerify(w io.Writer, r *verifyResult) {
	what := r.Reference
	if r.Name != "" {
		what = r.Name + " " + r.Version
	}
	if r.Verified {
		command.Printf(w, "verified %s (%s)\n", what, r.Digest)
	} else {
		command.Printf(w, "NOT verified %s (%s)\n", what, r.Digest)
	}
	if d := r.Decision; d != nil {
		if d.Rule != nil {
			command.Printf(w, "rule %d (%s, %s): %s\n", d.Rule.Index, d.Rule.Name, d.Rule.Method, d.Reason)
		} else {
			command.Printf(w, "%s\n", d.Reason)
		}
	}
	for _, s := range r.Signatures {
		name := string(s.Referrer)
		if name == "" {
			name = "bundle"
		}
		if s.Valid {
			command.Printf(w, "  valid    %s  %s\n", name, s.Signer)
		} else {
			command.Printf(w, "  invalid  %s  %s\n", name, s.Reason)
		}
	}
	if r.Unchecked > 0 {
		command.Printf(w, "  (%d more not checked: over the limit of signatures per plugin)\n", r.Unchecked)
	}
	if r.Unread > 0 {
		command.Printf(w, "  (%d referrers of unknown type not read: over --max-unknown-referrers)\n", r.Unread)
	}
}
