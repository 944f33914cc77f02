package host

import (
	"errors"
	"strings"
	"testing"
)

// FuzzToolName checks ToolName's promises on any triple of valid plugin
// and server names: a name strict clients accept, plain names that spell
// their plugin and server, hashed names recognisable as such.
func FuzzToolName(f *testing.F) {
	f.Add("acme", "db", "run_query")
	f.Add("acme.tools", "my server", "read.file")
	f.Add("a", "b", "__x__")
	f.Fuzz(func(t *testing.T, plugin, server, tool string) {
		if strings.Contains(plugin, "/") || strings.Contains(server, "/") {
			return // not valid names: the loader refuses them
		}
		n := ToolName(plugin, server, tool)
		if !toolNameRE.MatchString(n) {
			t.Fatalf("ToolName(%q, %q, %q) = %q", plugin, server, tool, n)
		}
		p, s, plain := splitPlainName(n)
		if plain && (p != plugin || s != server || n != plugin+"_"+server+"_"+tool) {
			t.Fatalf("plain name %q splits into %q %q", n, p, s)
		}
		if plain == strings.Contains(n, "__") {
			t.Fatalf("%q: plain %v", n, plain)
		}
	})
}

// FuzzParseConfig: any input is a configuration or an ErrConfig, and a
// value never shows in the error.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"servers": {"p/s": {"headers": {"A": {"env": "X", "prefix": "B "}}, "env": {"K": "v"}}}}`))
	f.Add([]byte(`{"inheritEnv": ["A*"]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		lookup := func(string) (string, bool) { return "fuzz-secret-value", true }
		c, err := ParseConfig(b, dir, lookup)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v is not ErrConfig", err)
			}
			if strings.Contains(err.Error(), "fuzz-secret-value") {
				t.Fatalf("error quotes a value: %v", err)
			}
			return
		}
		if c == nil {
			t.Fatal("nil config without an error")
		}
	})
}

// FuzzParseResourceURI: ResourceURI and ParseResourceURI invert each other.
func FuzzParseResourceURI(f *testing.F) {
	f.Add("p", "s", "test://x/{y}")
	f.Add("acme.tools", "a b%", "")
	f.Fuzz(func(t *testing.T, plugin, server, uri string) {
		p, s, u, err := ParseResourceURI(ResourceURI(plugin, server, uri))
		if err != nil || p != plugin || s != server || u != uri {
			t.Fatalf("round trip of %q %q %q: %q %q %q %v", plugin, server, uri, p, s, u, err)
		}
	})
}
