package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/oci"
)

// ociFlags are the flags every verb that talks to OCI registries shares.
type ociFlags struct {
	plainHTTP bool
	asJSON    bool
	// bar, when set, names the progress bar of the verb's blob
	// transfers (push, pull); other verbs draw none.
	bar string
	cmd *cobra.Command
}

func (f *ociFlags) register(cmd *cobra.Command) {
	f.cmd = cmd
	cmd.Flags().BoolVar(&f.plainHTTP, "plain-http", false, "talk to registries over HTTP instead of HTTPS (a local or test registry)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print one JSON document")
}

// remote is how to reach registries: HTTPS unless --plain-http, with the
// credentials of the Docker config and its helpers (docker login, oras
// login and plugkit login share them).
func (f *ociFlags) remote() (oci.RemoteOptions, error) {
	store, err := oci.DockerCredentials()
	if err != nil {
		return oci.RemoteOptions{}, usage(fmt.Errorf("Docker credentials: %w", err))
	}
	opts := oci.RemoteOptions{PlainHTTP: f.plainHTTP, Credentials: store, UserAgent: "plugkit"}
	if f.bar != "" && f.cmd != nil {
		opts.HTTPClient = ociProgressClient(f.cmd, f.bar)
	}
	return opts, nil
}

// parseOCIRef parses an argument that must be an oci:// or oci-layout:
// reference; what names the argument plays ("source", "destination")
// goes into the error.
func parseOCIRef(arg, what string) (oci.Reference, error) {
	if !oci.IsReference(arg) {
		return oci.Reference{}, usagef("%s %q: want oci://REGISTRY/REPOSITORY[:TAG][@DIGEST] or oci-layout:PATH[:TAG][@DIGEST]", what, arg)
	}
	r, err := oci.ParseReference(arg)
	if err != nil {
		return oci.Reference{}, usage(err)
	}
	return r, nil
}

// openOCI opens the store a reference names (for writing: a layout
// directory is created).
func (f *ociFlags) open(ctx context.Context, r oci.Reference, write bool) (oci.Store, error) {
	opts, err := f.remote()
	if err != nil {
		return nil, err
	}
	s, err := oci.Open(ctx, r, opts, write)
	if err != nil {
		return nil, ociFailure(r, err)
	}
	return s, nil
}

// ociFailure gives an error of package oci or oras-go its exit code and
// --json code: the content refused (1), the registry refused (1, with a
// login hint for 401), the reference malformed (2), anything else (the
// network, the disk) 2.
func ociFailure(r oci.Reference, err error) error {
	var er *errcode.ErrorResponse
	switch {
	case errors.Is(err, oci.ErrReference):
		return withCode(codeUsage, usage(err))
	case errors.Is(err, oci.ErrIndex), errors.Is(err, oci.ErrNotPlugin), errors.Is(err, oci.ErrConfig):
		return withCode(codeNotPlugin, failed(err))
	case errors.Is(err, oci.ErrDescriptor):
		return withCode(codeDigest, failed(err))
	case errors.Is(err, oci.ErrAmbiguous):
		return withCode(codeAmbiguous, failed(err))
	case errors.Is(err, oci.ErrNoPlugin), errors.Is(err, errdef.ErrNotFound):
		return withCode(codeNotFound, failed(err))
	case errors.As(err, &er) && er.StatusCode == http.StatusUnauthorized, strings.Contains(err.Error(), "credential not found"):
		return withCode(codeRegistry, failed(fmt.Errorf("%w (the registry wants credentials: plugkit login %s, or docker login)", err, r.Registry)))
	case errors.As(err, &er):
		return withCode(codeRegistry, failed(err))
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return usage(fmt.Errorf("%w (the registry speaks plain HTTP: add --plain-http if you trust the network)", err))
	case isInputError(err):
		return failed(err)
	}
	if _, rejected := agentplugin.Diagnostics(err); rejected {
		return failed(err)
	}
	return usage(err)
}
