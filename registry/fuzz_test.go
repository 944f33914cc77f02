package registry

import (
	"net/url"
	"testing"

	"github.com/plugkit/plugkit/distribution"
)

// FuzzParseResolve: the resolve query parser never panics, and whatever it
// accepts is a well-formed query that re-encodes to the same values.
func FuzzParseResolve(f *testing.F) {
	for _, s := range []string{
		"plugin_id=demo", "plugin_id=demo&channel=beta", "release_id=demo@1.0.0",
		"plugin_id=demo&release_id=demo%401.0.0", "plugin_id=demo;channel=x", "plugin_id=%zz",
		"plugin_id=demo&plugin_id=demo", "=x&", "channel=", "plugin_id=a&channel=b&release_id=c@d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseResolve(raw)
		if err != nil {
			return
		}
		if q.ReleaseID != "" {
			if distribution.CheckReleaseID(q.ReleaseID) != nil {
				t.Fatalf("accepted release id %q", q.ReleaseID)
			}
		} else if distribution.CheckPluginID(q.PluginID) != nil || distribution.CheckChannel(q.Channel) != nil {
			t.Fatalf("accepted %+v", q)
		}
		v := url.Values{}
		for k, s := range map[string]string{"plugin_id": q.PluginID, "release_id": q.ReleaseID, "channel": q.Channel} {
			if s != "" {
				v.Set(k, s)
			}
		}
		again, err := parseResolve(v.Encode())
		if err != nil || again != q {
			t.Fatalf("%q: %+v re-parsed as %+v, %v", raw, q, again, err)
		}
	})
}

// FuzzParseArtifactPath: only strict digests pass, and never a path that
// could reach outside the blob directory.
func FuzzParseArtifactPath(f *testing.F) {
	for _, s := range []string{
		"/artifacts/sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"/artifacts/sha256:../../etc/passwd", "/artifacts/", "/artifacts/sha256:ABC", "/catalog",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		d, err := parseArtifactPath(rest)
		if err != nil {
			return
		}
		if len(d) != 71 || d[:7] != "sha256:" {
			t.Fatalf("accepted %q as %q", rest, d)
		}
		for _, c := range d[7:] {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				t.Fatalf("accepted %q", d)
			}
		}
	})
}
