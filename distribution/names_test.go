package distribution

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestVersionCannotTakeADigestReleaseID: a manifest
// version of "sha256:<hex>" would take the release ID reserved for the
// versionless archive with that digest, so no version may hold ':'.
func TestVersionCannotTakeADigestReleaseID(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	for v, ok := range map[string]bool{
		"":                             true,
		"1.0.0":                        true,
		"1.0.0-rc.1+build.5":           true,
		"2024.10.01":                   true,
		digest:                         false,
		"SHA256:" + digest[7:]:         false,
		"sha512:abc":                   false,
		"1:2":                          false,
		"1 0":                          false,
		"a@b":                          false,
		"\x1b[31m":                     false,
		strings.Repeat("1", 129):       false,
		"v" + strings.Repeat("1", 127): true,
	} {
		if err := CheckVersion(v); (err == nil) != ok || err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("CheckVersion(%q) = %v, want ok=%v", v, err, ok)
		}
	}
	for id, ok := range map[string]bool{
		"kv@1.0.0":                  true,
		"kv@" + digest:              true,
		"kv@sha256:" + digest[7:20]: false,
		"kv@sha256:" + strings.ToUpper(digest[7:]): false,
		"kv@sha512:" + digest[7:]:                  false,
		"kv@":                                      false,
		"@1.0.0":                                   false,
		"Kv@1.0.0":                                 false,
	} {
		if err := CheckReleaseID(id); (err == nil) != ok {
			t.Errorf("CheckReleaseID(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}

func TestCheckIdentity(t *testing.T) {
	for id, ok := range map[string]bool{
		"alice":                  true,
		"ci-bot":                 true,
		"alice@example.com":      true,
		"A.B_c":                  true,
		"token:0123456789abcdef": true,
		"token:0123456789ABCDEF": false,
		"token:0123":             false,
		"":                       false,
		"-alice":                 false,
		"alice-":                 false,
		"al ice":                 false,
		"al=ice":                 false,
		"al:ice":                 false,
		strings.Repeat("a", 64):  true,
		strings.Repeat("a", 65):  false,
		"\u00e9":                 false,
	} {
		if err := CheckIdentity(id); (err == nil) != ok {
			t.Errorf("CheckIdentity(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}

// TestErrorCodesDocumented: every error code the protocol defines is in
// the table of docs/protocol.md, with its status.
func TestErrorCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	for code, status := range map[string]string{
		CodeBadRequest: "400", CodeUnknownParameter: "400", CodeInvalidDigest: "400", CodeInvalidArchive: "400",
		CodeUnauthorized: "401", CodeForbidden: "403", CodeNotOwner: "403", CodeNotFound: "404",
		CodeMethodNotAllowed: "405", CodeUploadTooSlow: "408", CodeVersionConflict: "409", CodeReleaseYanked: "409",
		CodeQuotaExceeded: "409", CodeTooLarge: "413", CodeUnsupportedMedia: "415", CodePluginRejected: "422",
		CodeInternal: "500", CodeBusy: "503",
	} {
		if !strings.Contains(string(doc), "| "+status+" | `"+code+"` |") {
			t.Errorf("docs/protocol.md has no row for %s %s", status, code)
		}
	}
}
