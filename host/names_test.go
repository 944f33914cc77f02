package host

import (
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	for _, tc := range []struct {
		plugin, server, tool string
		want                 string // "" when hashed: then wantPrefix
		wantPrefix           string
	}{
		{"acme", "db", "run_query", "acme_db_run_query", ""},
		{"a", "b", "c-d", "a_b_c-d", ""},
		{"acme.tools", "db", "run_query", "", "acme_tools_db_run_query__"},
		{"acme", "under_score", "x", "", "acme_under_score_x__"},
		{"acme", "db", "__init__", "", "acme_db___init____"},
		{"acme", "db", "_x", "", "acme_db__x__"},
		{"acme", "db", "a__b", "", "acme_db_a__b__"},
		{"acme", "db", "read.file", "", "acme_db_read_file__"},
		{"acme", "db", "ünïcode", "", "acme_db___n__code__"},
		{"acme", "db", "", "", "acme_db___"},
		{"acme", "db", strings.Repeat("t", 55), "acme_db_" + strings.Repeat("t", 55), ""},
		{"acme", "db", strings.Repeat("t", 57), "", "acme_db_" + strings.Repeat("t", 46) + "__"},
	} {
		got := ToolName(tc.plugin, tc.server, tc.tool)
		if !toolNameRE.MatchString(got) {
			t.Errorf("%s/%s/%s: %q is not ^[a-zA-Z0-9_-]{1,64}$", tc.plugin, tc.server, tc.tool, got)
		}
		if got != ToolName(tc.plugin, tc.server, tc.tool) {
			t.Errorf("%s/%s/%s: not deterministic", tc.plugin, tc.server, tc.tool)
		}
		hashed := strings.Contains(got, "__")
		switch {
		case tc.want != "" && (got != tc.want || hashed):
			t.Errorf("%s/%s/%s = %q, want %q", tc.plugin, tc.server, tc.tool, got, tc.want)
		case tc.want == "" && (!strings.HasPrefix(got, tc.wantPrefix) || len(got) != len(tc.wantPrefix)+8 && len(got) != MaxNameLength):
			t.Errorf("%s/%s/%s = %q, want %q + 8 hex", tc.plugin, tc.server, tc.tool, got, tc.wantPrefix)
		}
		if p, s, ok := splitPlainName(got); ok != !hashed || ok && (p != tc.plugin || s != tc.server) {
			t.Errorf("splitPlainName(%q) = %q %q %v", got, p, s, ok)
		}
	}
	// Triples that sanitise alike get different names. (Plugin and server
	// names never hold "/", which makes the hashed triple unambiguous.)
	seen := map[string]string{}
	for _, triple := range [][3]string{
		{"a.b", "c", "d"}, {"a-b", "c", "d"}, {"a", "b_c", "d"}, {"a", "b", "c_d"}, {"a", "b", "c.d"},
		{"a", "b", "c d"}, {"a", "b", "c/d"}, {"a", "b", "c__d"}, {"a", "b", "c___d"},
	} {
		n := ToolName(triple[0], triple[1], triple[2])
		if other, dup := seen[n]; dup {
			t.Errorf("%v and %s share %q", triple, other, n)
		}
		seen[n] = strings.Join(triple[:], "/")
	}
}

func TestResourceURI(t *testing.T) {
	for _, tc := range [][3]string{
		{"p", "s", "test://static"},
		{"acme.tools", "my server", "file:///a/{path}"},
		{"p", "s{x}/%", "https://example.com/a?b=c#d"},
		{"p", "s", ""},
	} {
		u := ResourceURI(tc[0], tc[1], tc[2])
		if !strings.HasPrefix(u, "plugin://") || strings.Contains(u[:len(u)-len(tc[2])], "{") {
			t.Errorf("ResourceURI%q = %q", tc, u)
		}
		p, s, orig, err := ParseResourceURI(u)
		if err != nil || p != tc[0] || s != tc[1] || orig != tc[2] {
			t.Errorf("ParseResourceURI(%q) = %q %q %q %v, want %q", u, p, s, orig, err, tc)
		}
	}
	for _, bad := range []string{"skill://p/s/x", "plugin://p", "plugin://p/s", "plugin://%zz/s/x"} {
		if _, _, _, err := ParseResourceURI(bad); err == nil {
			t.Errorf("ParseResourceURI(%q) accepted", bad)
		}
	}
}
