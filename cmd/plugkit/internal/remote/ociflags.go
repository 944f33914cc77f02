// Package remote holds what the verbs that talk to registries share: the
// flags and errors of OCI registries and layouts, and the flags, client
// and refusal messages of a Backplane registry.
package remote

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
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/factory"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/input"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/progress"
	"github.com/plugkit/plugkit/oci"
)

// OCIFlags are the flags every verb that talks to OCI registries shares.
type OCIFlags struct {
	// PlainHTTP is --plain-http: registries are reached over HTTP.
	PlainHTTP bool
	// JSON is --json: the verb prints one JSON document.
	JSON bool
	// Bar, when set, names the progress bar of the verb's blob
	// transfers (push, pull); other verbs draw none.
	Bar string
	fac *factory.Factory
	cmd *cobra.Command
}

// Register adds the flags to cmd, the verb whose flags they are, which
// runs with fac.
func (f *OCIFlags) Register(fac *factory.Factory, cmd *cobra.Command) {
	f.fac, f.cmd = fac, cmd
	cmd.Flags().BoolVar(&f.PlainHTTP, "plain-http", false, "talk to registries over HTTP instead of HTTPS (a local or test registry)")
	cmd.Flags().BoolVar(&f.JSON, "json", false, "print one JSON document")
}

// Remote is how to reach registries: HTTPS unless --plain-http, with the
// credentials of the Docker config and its helpers (docker login, oras
// login and plugkit login share them).
func (f *OCIFlags) Remote() (oci.RemoteOptions, error) {
	store, err := oci.DockerCredentials()
	if err != nil {
		return oci.RemoteOptions{}, command.Usage(fmt.Errorf("Docker credentials: %w", err))
	}
	opts := oci.RemoteOptions{PlainHTTP: f.PlainHTTP, Credentials: store, UserAgent: "plugkit"}
	if f.Bar != "" && f.cmd != nil {
		opts.HTTPClient = progress.Client(f.fac, f.cmd, f.Bar, 0)
	}
	return opts, nil
}

// ParseOCIRef parses an argument that must be an oci:// or oci-layout:
// reference; what names the argument plays ("source", "destination")
// goes into the error.
func ParseOCIRef(arg, what string) (oci.Reference, error) {
	if !oci.IsReference(arg) {
		return oci.Reference{}, command.Usagef("%s %q: want oci://REGISTRY/REPOSITORY[:TAG][@DIGEST] or oci-layout:PATH[:TAG][@DIGEST]", what, arg)
	}
	r, err := oci.ParseReference(arg)
	if err != nil {
		return oci.Reference{}, command.Usage(err)
	}
	return r, nil
}

// Open opens the store a reference names (for writing: a layout
// directory is created).
func (f *OCIFlags) Open(ctx context.Context, r oci.Reference, write bool) (oci.Store, error) {
	opts, err := f.Remote()
	if err != nil {
		return nil, err
	}
	s, err := oci.Open(ctx, r, opts, write)
	if err != nil {
		return nil, OCIFailure(r, err)
	}
	return s, nil
}

// PlainHTTPHint is err, a usage error, with the hint to add --plain-http
// when a registry answered HTTPS with plain HTTP; nil for any other err.
func PlainHTTPHint(err error) error {
	if !strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return nil
	}
	return command.Usage(fmt.Errorf("%w (the registry speaks plain HTTP: add --plain-http if you trust the network)", err))
}

// OCIFailure gives an error of package oci or oras-go its exit code and
// --json code: the content refused (1), the registry refused (1, with a
// login hint for 401), the reference malformed (2), anything else (the
// network, the disk) 2.
func OCIFailure(r oci.Reference, err error) error {
	if hinted := PlainHTTPHint(err); hinted != nil {
		return hinted
	}
	var er *errcode.ErrorResponse
	switch {
	case errors.Is(err, oci.ErrReference):
		return command.WithCode(command.CodeUsage, command.Usage(err))
	case errors.Is(err, oci.ErrIndex), errors.Is(err, oci.ErrNotPlugin), errors.Is(err, oci.ErrConfig):
		return command.WithCode(command.CodeNotPlugin, command.Failed(err))
	case errors.Is(err, oci.ErrDescriptor):
		return command.WithCode(command.CodeDigest, command.Failed(err))
	case errors.Is(err, oci.ErrAmbiguous):
		return command.WithCode(command.CodeAmbiguous, command.Failed(err))
	case errors.Is(err, oci.ErrNoPlugin), errors.Is(err, errdef.ErrNotFound):
		return command.WithCode(command.CodeNotFound, command.Failed(err))
	case errors.As(err, &er) && er.StatusCode == http.StatusUnauthorized, strings.Contains(err.Error(), "credential not found"):
		return command.WithCode(command.CodeRegistry, command.Failed(fmt.Errorf("%w (the registry wants credentials: plugkit login %s, or docker login)", err, r.Registry)))
	case errors.As(err, &er):
		return command.WithCode(command.CodeRegistry, command.Failed(err))
	case input.IsInputError(err):
		return command.Failed(err)
	}
	if _, rejected := agentplugin.Diagnostics(err); rejected {
		return command.Failed(err)
	}
	return command.Usage(err)
}

// BlobRef is a blob's digest and size.
type BlobRef struct {
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}
