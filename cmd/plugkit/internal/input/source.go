// Package input is how a verb reads the plugin an argument names: the one
// source rule of package source, the link rule's flag, the transports a
// client supports, and which errors are the input's fault.
package input

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
	"github.com/plugkit/plugkit/oci"
	"github.com/plugkit/plugkit/snapshot"
	"github.com/plugkit/plugkit/source"
)

// OpenSource parses arg with the one rule of package source and reads and
// loads the plugin it names. Every verb that reads one plugin goes through
// here, so that a directory, an archive and an artifact are judged by the
// same loader. Errors come as failed (the input is refused) or usage (it
// cannot be read); a rejection carries its diagnostics.
func OpenSource(ctx context.Context, arg string, popts source.ParseOptions, opts source.Options) (*source.Plugin, error) {
	src, err := source.Parse(arg, popts)
	if err != nil {
		return nil, command.Usage(err)
	}
	if src.Kind == source.OCI && opts.Remote.Credentials == nil {
		// Registries are read with the credentials docker and oras use.
		if opts.Remote.Credentials, err = oci.DockerCredentials(); err != nil {
			return nil, command.Usage(fmt.Errorf("Docker credentials: %w", err))
		}
	}
	p, err := source.Open(ctx, src, opts)
	switch {
	case err == nil:
		return p, nil
	case IsInputError(err):
		return nil, command.Failed(err)
	}
	if _, rejected := agentplugin.Diagnostics(err); rejected {
		return nil, command.Failed(err)
	}
	return nil, command.Usage(err)
}

// ParseTransports parses a --transports value such as "stdio,streamable-http".
func ParseTransports(v string) ([]agentplugin.Transport, error) {
	if v == "" {
		return nil, nil
	}
	var ts []agentplugin.Transport
	for _, name := range strings.Split(v, ",") {
		t := agentplugin.Transport(strings.TrimSpace(name))
		found := false
		for _, known := range agentplugin.AllTransports {
			found = found || t == known
		}
		if !found {
			return nil, fmt.Errorf("unknown transport %q (known: stdio, streamable-http, sse)", t)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// IsInputError reports whether err is about the plugin's content (a limit
// hit, an archive refused, a link --strict-links refuses) rather than about
// reading it at all.
func IsInputError(err error) bool {
	return errors.Is(err, snapshot.ErrLimit) || errors.Is(err, source.ErrArchive) || command.IsArchiveError(err) ||
		errors.Is(err, snapshot.ErrNotRegular) ||
		errors.Is(err, oci.ErrIndex) || errors.Is(err, oci.ErrNotPlugin) || errors.Is(err, oci.ErrConfig) ||
		errors.Is(err, oci.ErrDescriptor) || errors.Is(err, oci.ErrAmbiguous) || errors.Is(err, oci.ErrNoPlugin)
}

// RegisterStrictLinks adds --strict-links, the one switch of the link rule,
// to a verb that reads plugin directories.
func RegisterStrictLinks(cmd *cobra.Command, strict *bool) {
	cmd.Flags().BoolVar(strict, "strict-links", false, "refuse any symbolic link or special file in a plugin directory (default: read links that stay inside it)")
}

// ReadOptions is the directory reader's side of the link rule.
func ReadOptions(strictLinks bool) snapshot.Options {
	return snapshot.Options{Strict: strictLinks}
}

// SourceDigest is the identity of what was read (an archive file's digest,
// say), or for a directory the digest of the archive it packs to.
func SourceDigest(p *source.Plugin) (string, error) {
	if p.Identity != "" {
		return p.Identity, nil
	}
	b, err := archive.Pack(p.Package.Snapshot, archive.PackOptions{})
	if err != nil {
		return "", err
	}
	return archive.Digest(b), nil
}
