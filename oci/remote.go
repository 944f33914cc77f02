package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// RemoteOptions say how to reach a registry. The zero value uses HTTPS and
// no credentials.
type RemoteOptions struct {
	// PlainHTTP allows HTTP instead of HTTPS (oras's --plain-http).
	PlainHTTP bool
	// Credentials, when set, supplies credentials per registry; see
	// DockerCredentials for the store docker, oras and helm share.
	Credentials credentials.Store
	// HTTPClient, when set, sends the requests (a test's TLS roots, a
	// proxy); the default retries transient failures with oras-go's
	// default policy, plugkit's one retry policy (see
	// distribution.RetryTransport, which follows it too).
	HTTPClient *http.Client
	// UserAgent is sent with every request; default "plugkit".
	UserAgent string
}

// DockerCredentials opens the credential store of the Docker config file
// ($DOCKER_CONFIG/config.json, else ~/.docker/config.json) with its
// credential helpers, shared with docker login and oras login. New
// credentials go to the configured helper, else into the file.
func DockerCredentials() (credentials.Store, error) {
	return credentials.NewStoreFromDocker(credentials.StoreOptions{AllowPlaintextPut: true})
}

// Repository is a registry repository. It reads through oras-go's remote
// client (the referrers API, or the referrers tag schema where the registry
// has none, keeping superseded referrer indexes: SkipReferrersGC) and
// serialises the writes of referrers that share a subject, since on a
// registry without the referrers API concurrent updates of the fallback
// index lose entries.
type Repository struct {
	repo     *remote.Repository
	subjects sync.Map // subject digest → *sync.Mutex
}

// NewRepository opens REGISTRY/REPOSITORY (no oci:// prefix, no tag).
func NewRepository(name string, opts RemoteOptions) (*Repository, error) {
	repo, err := remote.NewRepository(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrReference, err)
	}
	repo.PlainHTTP = opts.PlainHTTP
	repo.SkipReferrersGC = true
	repo.Client = authClient(opts)
	return &Repository{repo: repo}, nil
}

// authClient is the HTTP client of RemoteOptions with credentials.
func authClient(opts RemoteOptions) *auth.Client {
	c := &auth.Client{Client: opts.HTTPClient, Cache: auth.NewCache(), Header: http.Header{"User-Agent": {opts.UserAgent}}}
	if c.Client == nil {
		c.Client = retry.DefaultClient
	}
	if opts.UserAgent == "" {
		c.Header.Set("User-Agent", "plugkit")
	}
	if opts.Credentials != nil {
		c.Credential = credentials.Credential(opts.Credentials)
	}
	return c
}

// Reference names the repository (registry and repository, no tag), for
// callers that coordinate work per repository, such as signers of one
// subject (package trust).
func (r *Repository) Reference() registry.Reference { return r.repo.Reference }

// Fetch reads a manifest or blob by digest. Sizes and digests are checked
// by the reader (Pull), so that a lie is reported as ErrDescriptor.
func (r *Repository) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	var store registry.ReferenceFetcher = r.repo.Blobs()
	if isManifestType(desc.MediaType) {
		store = r.repo.Manifests()
	}
	_, rc, err := store.FetchReference(ctx, desc.Digest.String())
	return rc, err
}

// Exists reports whether the repository holds desc.
func (r *Repository) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	return r.repo.Exists(ctx, desc)
}

// Resolve finds a tag or digest.
func (r *Repository) Resolve(ctx context.Context, ref string) (ocispec.Descriptor, error) {
	return r.repo.Resolve(ctx, ref)
}

// Tag points ref at the manifest desc.
func (r *Repository) Tag(ctx context.Context, desc ocispec.Descriptor, ref string) error {
	return r.repo.Tag(ctx, desc, ref)
}

// Predecessors lists the referrers of desc.
func (r *Repository) Predecessors(ctx context.Context, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	return r.repo.Predecessors(ctx, desc)
}

// Push uploads content; a manifest with a subject is pushed while holding
// that subject's lock.
func (r *Repository) Push(ctx context.Context, desc ocispec.Descriptor, rd io.Reader) error {
	if !isManifestType(desc.MediaType) || desc.Size > DefaultMaxManifestBytes {
		return r.repo.Push(ctx, desc, rd)
	}
	b, err := content.ReadAll(rd, desc)
	if err != nil {
		return err
	}
	var m struct {
		Subject *ocispec.Descriptor `json:"subject"`
	}
	if json.Unmarshal(b, &m) == nil && m.Subject != nil {
		mu, _ := r.subjects.LoadOrStore(m.Subject.Digest, new(sync.Mutex))
		mu.(*sync.Mutex).Lock()
		defer mu.(*sync.Mutex).Unlock()
	}
	return r.repo.Push(ctx, desc, bytes.NewReader(b))
}

// PushReference pushes a manifest and tags it in one request.
func (r *Repository) PushReference(ctx context.Context, desc ocispec.Descriptor, rd io.Reader, tag string) error {
	return r.repo.PushReference(ctx, desc, rd, tag)
}

// Login checks cred against the registry (a wrong password fails and
// stores nothing), then stores it for the registry in store.
func Login(ctx context.Context, store credentials.Store, host string, cred auth.Credential, opts RemoteOptions) error {
	reg, err := remote.NewRegistry(host)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrReference, err)
	}
	reg.PlainHTTP = opts.PlainHTTP
	c := authClient(opts)
	c.Credential = nil
	reg.Client = c
	return credentials.Login(ctx, store, reg, cred)
}

// Logout removes the registry's credentials from store.
func Logout(ctx context.Context, store credentials.Store, host string) error {
	return credentials.Logout(ctx, store, host)
}

// isManifestType reports whether a media type is a manifest or an index
// (what the registry keeps under /manifests/).
func isManifestType(mt string) bool {
	switch mt {
	case ManifestMediaType, indexMediaType, dockerManifestType, dockerListMediaType,
		"application/vnd.oci.artifact.manifest.v1+json":
		return true
	}
	return false
}
