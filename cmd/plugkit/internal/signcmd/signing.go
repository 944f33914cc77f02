package signcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/remote"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/trust"
)

// What the signing verbs (key generate, sign, attest, verify) share.

// passwordEnv is cosign's variable for a key's password; set, even empty,
// it is used without asking.
const passwordEnv = "COSIGN_PASSWORD"

// readPassword gets a key's password: COSIGN_PASSWORD when set, else a
// prompt without echo on the terminal (twice when confirm), never argv.
// Only a terminal that is a file (the process's own) prompts.
func readPassword(fac *factory.Factory, cmd *cobra.Command, confirm bool) ([]byte, error) {
	if pw, ok := os.LookupEnv(passwordEnv); ok {
		return []byte(pw), nil
	}
	file, isFile := cmd.InOrStdin().(*os.File)
	if !fac.InTerminal || !isFile {
		return nil, command.Usagef("the key's password: set %s (it may be empty) or run on a terminal to be asked (passwords are never taken from the command line)", passwordEnv)
	}
	fd := int(file.Fd())
	ask := func(prompt string) ([]byte, error) {
		fmt.Fprint(cmd.ErrOrStderr(), prompt)
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(cmd.ErrOrStderr())
		return b, err
	}
	pw, err := ask("Enter password for private key: ")
	if err != nil {
		return nil, command.Usage(err)
	}
	if confirm {
		again, err := ask("Enter password for private key again: ")
		if err != nil {
			return nil, command.Usage(err)
		}
		if string(again) != string(pw) {
			return nil, command.Failed(errors.New("the passwords do not match"))
		}
	}
	return pw, nil
}

// loadSigningKey reads --key: a cosign key file (its password as
// readPassword gets it) or an unencrypted PKCS#8 PEM key.
func loadSigningKey(fac *factory.Factory, cmd *cobra.Command, path string) (*trust.PrivateKey, error) {
	if path == "" {
		return nil, command.Usagef("--key is required: a private key file (plugkit key generate makes one)")
	}
	var pwErr error
	k, err := trust.LoadPrivateKey(path, func() ([]byte, error) {
		pw, err := readPassword(fac, cmd, false)
		pwErr = err
		return pw, err
	})
	switch {
	case err == nil:
		return k, nil
	case pwErr != nil:
		return nil, pwErr
	case errors.Is(err, trust.ErrPassword):
		return nil, command.WithCode(command.CodePassword, command.Failed(err))
	case command.IsIOError(err):
		return nil, command.Usage(err)
	}
	return nil, command.Failed(err)
}

// openPlugin opens the store an OCI reference names and reads the plugin
// in it, checked as pull checks it. The store stays open (its referrers are
// what the signing verbs work on); the caller closes it, which writes a
// layout's index.json.
func openPlugin(ctx context.Context, f *remote.OCIFlags, ref oci.Reference, write bool) (oci.Store, *oci.Plugin, error) {
	if ref.Layout && write {
		// Opening a layout for writing creates it: refuse a path that is
		// not a layout directory before anything is made.
		if fi, err := os.Stat(ref.Path); err != nil {
			return nil, nil, command.Usage(err)
		} else if !fi.IsDir() {
			return nil, nil, command.Failed(fmt.Errorf("%s: an air-gap tar is read-only: sign the layout directory or registry it was exported from, then export again", ref.Path))
		}
	}
	store, err := f.Open(ctx, ref, write)
	if err != nil {
		return nil, nil, err
	}
	p, err := oci.Pull(ctx, store, ref.Selector(), oci.PullOptions{})
	if err != nil {
		store.Close()
		return nil, nil, remote.OCIFailure(ref, err)
	}
	return store, p, nil
}

// keyRef names the key that signed, in the verbs' documents.
type keyRef struct {
	Path  string `json:"path"`
	KeyID string `json:"keyId"`
}

// signedResult is the --json document of sign and attest for an OCI
// plugin.
type signedResult struct {
	Reference     string         `json:"reference"`
	Digest        string         `json:"digest"`
	Name          string         `json:"name"`
	Version       string         `json:"version"`
	PredicateType string         `json:"predicateType"`
	Referrer      remote.BlobRef `json:"referrer"`
	Bundle        remote.BlobRef `json:"bundle"`
	Key           keyRef         `json:"key"`
	// ReAdded counts how often the signature had to be added again to a
	// registry's referrers index after a concurrent writer dropped it.
	ReAdded int `json:"reAdded"`
}

// signOCI signs (or attests, with opts) the plugin ref names, and prints
// the result.
func signOCI(fac *factory.Factory, cmd *cobra.Command, f *remote.OCIFlags, arg, keyPath string, opts *trust.SignOptions) error {
	ref, err := remote.ParseOCIRef(arg, "reference")
	if err != nil {
		return err
	}
	key, err := loadSigningKey(fac, cmd, keyPath)
	if err != nil {
		return err
	}
	store, p, err := openPlugin(cmd.Context(), f, ref, true)
	if err != nil {
		return command.Explain(cmd, err)
	}
	a, err := trust.Sign(cmd.Context(), store, p.Descriptor, key, opts)
	if cerr := store.Close(); err == nil && cerr != nil {
		err = command.Usage(cerr)
	}
	if err != nil {
		if errors.Is(err, trust.ErrReferrerLost) {
			return command.Failed(err)
		}
		return remote.OCIFailure(ref, err)
	}
	res := signedResult{
		Reference: ref.String(), Digest: p.Descriptor.Digest.String(), Name: p.Package.Name, Version: p.Package.Version,
		PredicateType: a.PredicateType,
		Referrer:      remote.BlobRef{Digest: a.Referrer.Digest.String(), Size: a.Referrer.Size},
		Bundle:        remote.BlobRef{Digest: a.Bundle.Digest.String(), Size: a.Bundle.Size},
		Key:           keyRef{Path: keyPath, KeyID: key.Public.ID},
		ReAdded:       a.ReAdded,
	}
	return command.Output(cmd, f.JSON, res, func(w io.Writer) {
		if a.PredicateType == trust.SignPredicateType {
			command.Printf(w, "signed %s %s (%s)\n", res.Name, res.Version, res.Digest)
		} else {
			command.Printf(w, "attested %s %s (%s): %s\n", res.Name, res.Version, res.Digest, res.PredicateType)
		}
		command.Printf(w, "referrer: %s\nkey:      %s (%s)\n", res.Referrer.Digest, res.Key.Path, res.Key.KeyID)
	})
}
