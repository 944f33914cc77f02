package oci

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/plugkit/plugkit/archive"
)

// fetchVerified reads the content desc describes, refusing before it is
// read a size over limit (named limitName), and after it is read any size
// or digest other than the descriptor's. It reads at most desc.Size+1
// bytes, whatever the source sends. A manifest a layout holds decoded
// (checked against its digest when the layout was opened) is neither
// read nor hashed again; the caller shares its bytes, read-only.
func fetchVerified(ctx context.Context, src content.Fetcher, desc ocispec.Descriptor, limit int64, limitName string) ([]byte, error) {
	if err := checkDescriptor(desc, limit, limitName); err != nil {
		return nil, err
	}
	if m := heldManifest(src, desc.Digest); m != nil {
		if int64(len(m.raw)) != desc.Size {
			return nil, sizeLie(desc, int64(len(m.raw)))
		}
		return m.raw, nil
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
		return nil, sizeLie(desc, int64(len(b)))
	}
	if sum := sha256.Sum256(b); !sumIs(desc.Digest, sum[:]) {
		return nil, digestLie(desc, digest.NewDigestFromBytes(digest.SHA256, sum[:]))
	}
	return b, nil
}

// sumIs reports whether sum is the hash d names, compared without the
// allocations of a digest.Digest made of it (the sum and two strings,
// for each blob an export reads).
func sumIs(d digest.Digest, sum []byte) bool {
	var buf [2 * sha512.Size]byte
	n := hex.Encode(buf[:], sum)
	return d.Encoded() == string(buf[:n])
}

// checkDescriptor refuses, before its content is read, a descriptor whose
// digest is not sha256 or whose size is negative or over limit (named
// limitName).
func checkDescriptor(desc ocispec.Descriptor, limit int64, limitName string) error {
	if !isSHA256(desc.Digest) {
		return fmt.Errorf("%w: digest %q is not a sha256 digest", ErrDescriptor, desc.Digest)
	}
	if desc.Size < 0 {
		return fmt.Errorf("%w: %s: negative size %d", ErrDescriptor, desc.Digest, desc.Size)
	}
	if desc.Size > limit {
		return &LimitError{Limit: limitName, Value: limit, Path: desc.Digest.String()}
	}
	return nil
}

// isSHA256 reports whether d is a valid sha256 digest, as d.Validate and
// d.Algorithm would, without the regular expression Validate runs for
// every digest (a few percent of an export's CPU time).
func isSHA256(d digest.Digest) bool {
	_, err := archive.ParseDigest(string(d))
	return err == nil
}

// sizeLie is the error of content of n bytes, where n is desc.Size+1 when
// the reader stopped one past the descriptor's size.
func sizeLie(desc ocispec.Descriptor, n int64) error {
	seen := fmt.Sprint(n)
	if n > desc.Size {
		seen = "more"
	}
	return fmt.Errorf("%w: %s: the descriptor says %d bytes, the content has %s", ErrDescriptor, desc.Digest, desc.Size, seen)
}

// digestLie is the error of content that hashes to got, not to desc.Digest.
func digestLie(desc ocispec.Descriptor, got digest.Digest) error {
	return fmt.Errorf("%w: the descriptor says %s, the content hashes to %s", ErrDescriptor, desc.Digest, got)
}

// verifyReader reads the content desc describes from r, at most
// desc.Size+1 bytes, hashing what it reads; verdict then says whether it
// was the content of desc. It is how a blob is checked while it is
// copied somewhere, where fetchVerified holds it.
type verifyReader struct {
	r    io.Reader
	desc ocispec.Descriptor
	h    hash.Hash // of desc's algorithm
	n    int64
	end  bool // r said EOF, or gave more than desc.Size bytes
}

func newVerifyReader(r io.Reader, desc ocispec.Descriptor) *verifyReader {
	return &verifyReader{r: io.LimitReader(r, desc.Size+1), desc: desc, h: desc.Digest.Algorithm().Hash()}
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if err == io.EOF || v.n > v.desc.Size {
		v.end = true
	}
	return n, err
}

// verdict is the outcome of a copy of the content through v that ended
// with err: content of another size or digest than desc's is refused
// (ErrDescriptor) when v was read to its end; else the copy's own error
// says why it stopped.
func (v *verifyReader) verdict(err error) error {
	switch {
	case !v.end && err == nil:
		return fmt.Errorf("%s: the content was not read to its end", v.desc.Digest)
	case !v.end:
		return err
	case v.n != v.desc.Size:
		return sizeLie(v.desc, v.n)
	}
	var buf [sha512.Size]byte
	if sum := v.h.Sum(buf[:0]); !sumIs(v.desc.Digest, sum) {
		return digestLie(v.desc, digest.NewDigestFromBytes(v.desc.Digest.Algorithm(), sum))
	}
	return err
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
