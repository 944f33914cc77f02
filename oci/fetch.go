package oci

import (
	"context"
	"fmt"
	"io"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// fetchVerified reads the content desc describes, refusing before it is
// read a size over limit (named limitName), and after it is read any size
// or digest other than the descriptor's. It reads at most desc.Size+1
// bytes, whatever the source sends.
func fetchVerified(ctx context.Context, src content.Fetcher, desc ocispec.Descriptor, limit int64, limitName string) ([]byte, error) {
	if err := desc.Digest.Validate(); err != nil || desc.Digest.Algorithm() != digest.SHA256 {
		return nil, fmt.Errorf("%w: digest %q is not a sha256 digest", ErrDescriptor, desc.Digest)
	}
	if desc.Size < 0 {
		return nil, fmt.Errorf("%w: %s: negative size %d", ErrDescriptor, desc.Digest, desc.Size)
	}
	if desc.Size > limit {
		return nil, &LimitError{Limit: limitName, Value: limit, Path: desc.Digest.String()}
	}
	rc, err := src.Fetch(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", desc.Digest, err)
	}
	defer rc.Close()
	b := make([]byte, 0, desc.Size+1)
	b, err = readAllInto(io.LimitReader(rc, desc.Size+1), b)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", desc.Digest, err)
	}
	if int64(len(b)) != desc.Size {
		return nil, fmt.Errorf("%w: %s: the descriptor says %d bytes, the content has %s", ErrDescriptor, desc.Digest, desc.Size, sizeSeen(len(b), desc.Size))
	}
	if got := digest.FromBytes(b); got != desc.Digest {
		return nil, fmt.Errorf("%w: the descriptor says %s, the content hashes to %s", ErrDescriptor, desc.Digest, got)
	}
	return b, nil
}

// sizeSeen says how many bytes came: n, or "more" when the reader stopped
// one past the descriptor's size.
func sizeSeen(n int, want int64) string {
	if int64(n) > want {
		return "more"
	}
	return fmt.Sprint(n)
}

// readAllInto reads r to the end into b's spare capacity.
func readAllInto(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
