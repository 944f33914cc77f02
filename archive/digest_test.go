package archive_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
)

func TestParseDigest(t *testing.T) {
	good := archive.Digest([]byte("x"))
	if d, err := archive.ParseDigest(good); err != nil || d != good {
		t.Fatalf("ParseDigest(%q) = %q, %v", good, d, err)
	}
	hexPart := strings.TrimPrefix(good, "sha256:")
	for _, bad := range []string{
		"", "sha256:", hexPart, "sha512:" + hexPart, "SHA256:" + hexPart, "sha256:" + strings.ToUpper(hexPart),
		"sha256:" + hexPart[:63], "sha256:" + hexPart + "0", " " + good, good + "\n", "sha256:" + hexPart[:63] + "g",
		"sha256=" + hexPart,
	} {
		if _, err := archive.ParseDigest(bad); !errors.Is(err, archive.ErrDigest) {
			t.Errorf("ParseDigest(%q) = %v", bad, err)
		}
	}
}

func TestDigestReader(t *testing.T) {
	d, n, err := archive.DigestReader(strings.NewReader("hello\n"))
	if err != nil || n != 6 || d != archive.Digest([]byte("hello\n")) {
		t.Fatalf("DigestReader = %q, %d, %v", d, n, err)
	}
}

func TestDigestWriter(t *testing.T) {
	d := archive.NewDigestWriter()
	d.Write([]byte("hel"))
	d.Write([]byte("lo\n"))
	if d.Digest() != archive.Digest([]byte("hello\n")) || d.Size() != 6 {
		t.Fatalf("DigestWriter = %s, %d", d.Digest(), d.Size())
	}
}
