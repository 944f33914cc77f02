package registry

import (
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

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

// FuzzInstallationCursor: the cursor parser never panics, and whatever it
// accepts is a key that installationCursor writes back unchanged.
func FuzzInstallationCursor(f *testing.F) {
	f.Add(installationCursor(distribution.Installation{PluginID: "demo", Reporter: "alice", ID: "laptop/demo"}))
	f.Add(installationCursor(distribution.Installation{PluginID: "demo", ID: "x"}))
	for _, s := range []string{"", "%%%", "bm9wZQ", "AAAA", "ZGVtbwBhAGIAYw"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		key, err := parseInstallationCursor(c)
		if err != nil {
			return
		}
		if distribution.CheckPluginID(key.PluginID) != nil {
			t.Fatalf("accepted plugin %q", key.PluginID)
		}
		again := installationCursor(distribution.Installation{PluginID: key.PluginID, Reporter: key.Reporter, ID: key.ID})
		if k2, err := parseInstallationCursor(again); err != nil || k2 != key {
			t.Fatalf("%q: %+v does not round-trip: %+v %v", c, key, k2, err)
		}
	})
}

// FuzzTokenEntry: every token entry has a valid identity, and a
// NAME=SECRET split never leaves an empty secret.
func FuzzTokenEntry(f *testing.F) {
	for _, s := range []string{"alice=secret", "secret", "c2VjcmV0==", "dGVzdDE=", "a==b", "=x", "a b=c", "token:0123456789abcdef=x", "x=\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		id, secret := splitToken(entry)
		if distribution.CheckIdentity(id) != nil {
			t.Fatalf("%q: identity %q is not valid", entry, id)
		}
		if secret == "" && entry != "" {
			t.Fatalf("%q: empty secret", entry)
		}
		if secret != entry && entry != id+"="+secret {
			t.Fatalf("%q split as %q and %q", entry, id, secret)
		}
	})
}

// FuzzBoundText: stored text is within its bound, valid UTF-8 and free of
// control characters, whatever comes in.
func FuzzBoundText(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb", "\x1b[31m", "ééééé", "bad\xff", strings.Repeat("x", 300)} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 4 || limit > 1<<16 {
			return
		}
		got := boundText(s, limit)
		if len(got) > limit || !utf8.ValidString(got) {
			t.Fatalf("boundText(%q, %d) = %q", s, limit, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) {
				t.Fatalf("boundText(%q) kept control %U", s, r)
			}
		}
	})
}

// FuzzEncodeRelease: the resolve encoder writes exactly what
// encoding/json writes for the release (plainRelease), whatever its text
// and time.
func FuzzEncodeRelease(f *testing.F) {
	f.Add("demo@1.0.0", "demo", "1.0.0", "A demo plugin", "sha256:"+strings.Repeat("ab", 32), int64(500578), false, int64(1764547200), int64(123456789), true)
	f.Add("demo@2.0.0", "demo", "", `quotes " and \ and <html> & é 日本 \u2028`, "", int64(-1), true, int64(0), int64(0), false)
	f.Add("x", "y", "z", "tab\there\nnew\x7f\x00\xff", "d", int64(1<<62), false, int64(-62135596800-1), int64(999999999), true)
	f.Add("x", "y", "z", "", "d", int64(0), false, int64(253402300800), int64(1), true)
	f.Fuzz(func(t *testing.T, id, plugin, version, desc, digest string, size int64, yanked bool, sec, nsec int64, utc bool) {
		at := time.Unix(sec, nsec).UTC()
		if !utc {
			at = at.In(time.FixedZone("X", 3600+30))
		}
		rel := distribution.Release{ID: id, PluginID: plugin, Version: version, Description: desc,
			ArtifactDigest: digest, Size: size, Yanked: yanked, PublishedAt: at}
		want, wantErr := marshal(plainRelease(rel))
		got, err := encodeRelease(rel)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("encodeRelease(%+v) = %q, %v; encoding/json: %q, %v", rel, got, err, want, wantErr)
		}
	})
}
