package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// digestPrefix starts every digest: only SHA-256 is used.
const digestPrefix = "sha256:"

// ErrDigest is matched by every error of ParseDigest.
var ErrDigest = errors.New("invalid digest")

// Digest returns the identity of an archive: "sha256:" followed by the 64
// lowercase hex digits of the SHA-256 of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return digestPrefix + hex.EncodeToString(sum[:])
}

// DigestReader returns the Digest of everything r yields, and its length,
// without holding it in memory.
func DigestReader(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, err
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil)), n, nil
}

// DigestWriter computes the Digest and size of everything written to it,
// for archives that are streamed rather than held (PackTo to a file).
type DigestWriter struct {
	h hash.Hash
	n int64
}

// NewDigestWriter starts a digest.
func NewDigestWriter() *DigestWriter { return &DigestWriter{h: sha256.New()} }

// Write hashes p; it never fails.
func (d *DigestWriter) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return d.h.Write(p)
}

// Digest is the Digest of the bytes written so far.
func (d *DigestWriter) Digest() string { return digestPrefix + hex.EncodeToString(d.h.Sum(nil)) }

// Size is the number of bytes written so far.
func (d *DigestWriter) Size() int64 { return d.n }

// ParseDigest checks that s is exactly "sha256:" followed by 64 lowercase
// hex digits, and returns it. Any other algorithm, uppercase digit, length
// or surrounding space is an error wrapping ErrDigest.
func ParseDigest(s string) (string, error) {
	hexPart, ok := strings.CutPrefix(s, digestPrefix)
	if !ok {
		return "", fmt.Errorf("%w: %q does not start with %q", ErrDigest, s, digestPrefix)
	}
	if len(hexPart) != sha256.Size*2 {
		return "", fmt.Errorf("%w: %q: want %d hex digits", ErrDigest, s, sha256.Size*2)
	}
	for i := 0; i < len(hexPart); i++ {
		c := hexPart[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", fmt.Errorf("%w: %q: not a lowercase hex digit at %d", ErrDigest, s, len(digestPrefix)+i)
		}
	}
	return s, nil
}
