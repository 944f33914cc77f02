package source

import (
	"errors"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/oci"
)

func TestParse(t *testing.T) {
	installed := func(name string) bool { return name == "kv" }
	for _, c := range []struct {
		arg  string
		opts ParseOptions
		want Source
	}{
		{"./plugin", ParseOptions{}, Source{Kind: Path, Path: "./plugin"}},
		{"plugins/kv", ParseOptions{Registry: "http://r"}, Source{Kind: Path, Path: "plugins/kv"}},
		{".", ParseOptions{}, Source{Kind: Path, Path: "."}},
		{"/abs/dir", ParseOptions{}, Source{Kind: Path, Path: "/abs/dir"}},
		{"kv-1.0.0.tar.gz", ParseOptions{Registry: "http://r"}, Source{Kind: Path, Path: "kv-1.0.0.tar.gz"}},
		{"kv.tgz", ParseOptions{}, Source{Kind: Path, Path: "kv.tgz"}},
		{"oci://127.0.0.1:5000/plugins/kv:1.0", ParseOptions{}, Source{Kind: OCI, OCI: oci.Reference{Registry: "127.0.0.1:5000", Repository: "plugins/kv", Tag: "1.0"}}},
		{"oci://ghcr.io/acme/kv@sha256:" + hex64, ParseOptions{}, Source{Kind: OCI, OCI: oci.Reference{Registry: "ghcr.io", Repository: "acme/kv", Digest: "sha256:" + hex64}}},
		{"oci-layout:dist/layout:1.0", ParseOptions{}, Source{Kind: OCILayout, Path: "dist/layout", OCI: oci.Reference{Layout: true, Path: "dist/layout", Tag: "1.0"}}},
		{"oci-layout:air.tar@sha256:" + hex64, ParseOptions{}, Source{Kind: OCILayout, Path: "air.tar", OCI: oci.Reference{Layout: true, Path: "air.tar", Digest: "sha256:" + hex64}}},
		{"oci-layout:air.tar:1.0@sha256:" + hex64, ParseOptions{}, Source{Kind: OCILayout, Path: "air.tar", OCI: oci.Reference{Layout: true, Path: "air.tar", Tag: "1.0", Digest: "sha256:" + hex64}}},
		{"oci-layout:dir:with/colon", ParseOptions{}, Source{Kind: OCILayout, Path: "dir:with/colon", OCI: oci.Reference{Layout: true, Path: "dir:with/colon"}}},
		{"oci-layout:layout", ParseOptions{}, Source{Kind: OCILayout, Path: "layout", OCI: oci.Reference{Layout: true, Path: "layout"}}},
		{"kv", ParseOptions{Registry: "http://r", Channel: "beta"}, Source{Kind: Registry, Registry: "http://r", Name: "kv", Channel: "beta"}},
		{"kv", ParseOptions{Installed: installed}, Source{Kind: Installed, Name: "kv"}},
		// A registry, when set, wins over an installed name.
		{"kv", ParseOptions{Registry: "http://r", Installed: installed}, Source{Kind: Registry, Registry: "http://r", Name: "kv"}},
	} {
		got, err := Parse(c.arg, c.opts)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.arg, got, err, c.want)
		}
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseRefusals(t *testing.T) {
	for _, c := range []struct {
		arg  string
		opts ParseOptions
	}{
		{"", ParseOptions{}},
		{"kv", ParseOptions{}}, // no registry, no installed plugins: suggest ./kv
		{"kv", ParseOptions{Installed: func(string) bool { return false }}},
		{"oci://", ParseOptions{}},
		{"oci://kv", ParseOptions{}},
		{"oci-layout:", ParseOptions{}},
		{"oci://Upper/Case:1", ParseOptions{}},
		{"oci://127.0.0.1:5000/plugins/kv:bad tag", ParseOptions{}},
		{"oci://127.0.0.1:5000/plugins/kv@sha256:abc", ParseOptions{}},
		{"oci-layout:air.tar@sha512:" + hex64, ParseOptions{}},
		{"Bad_Name", ParseOptions{Registry: "http://r"}},
	} {
		_, err := Parse(c.arg, c.opts)
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): %v, want ErrSyntax", c.arg, err)
		}
	}
	_, err := Parse("kv", ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "./kv") {
		t.Errorf("error %v does not suggest ./kv", err)
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, arg := range []string{"./plugin", "oci://127.0.0.1:5000/p/kv:1", "oci-layout:air.tar", "oci-layout:dir:1.0",
		"oci-layout:air.tar@sha256:" + hex64, "oci-layout:air.tar:1.0@sha256:" + hex64, "oci://127.0.0.1:5000/p/kv:1@sha256:" + hex64} {
		s, err := Parse(arg, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.String() != arg {
			t.Errorf("Parse(%q).String() = %q", arg, s.String())
		}
		back, err := Parse(s.String(), ParseOptions{})
		if err != nil || back != s {
			t.Errorf("round trip of %q: %+v, %v", arg, back, err)
		}
	}
}
