package ocicmd

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/cmd/plugkit/internal/clitest"
	"github.com/plugkit/plugkit/cmd/plugkit/internal/command"
)

// writeBlob stores b in the layout dir and returns its digest.
func writeBlob(t *testing.T, dir string, b []byte) string {
	t.Helper()
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])
	if err := os.WriteFile(filepath.Join(dir, "blobs", "sha256", hexSum), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return "sha256:" + hexSum
}

// replaceLayer gives the plugin the layout dir lists (one manifest) the
// layer b, with a new manifest listed in its place in index.json: a
// plugin whose manifest and config are sound and whose layer is b.
func replaceLayer(t *testing.T, dir string, b []byte) {
	t.Helper()
	var index map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "index.json")), &index); err != nil {
		t.Fatal(err)
	}
	entry := index["manifests"].([]any)[0].(map[string]any)
	var manifest map[string]any
	json.Unmarshal(readFile(t, filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(entry["digest"].(string), "sha256:"))), &manifest)
	layer := manifest["layers"].([]any)[0].(map[string]any)
	layer["digest"], layer["size"] = writeBlob(t, dir, b), len(b)
	mb, _ := json.Marshal(manifest)
	entry["digest"], entry["size"] = writeBlob(t, dir, mb), len(mb)
	ib, _ := json.Marshal(index)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), ib, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// linkLayer is the example plugin's plugin.json under release-notes/ and
// a symbolic link beside it, as a gzipped tar.
func linkLayer(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	pj := readFile(t, filepath.Join(clitest.ExamplePlugin(), "plugin.json"))
	tw.WriteHeader(&tar.Header{Name: "release-notes/plugin.json", Mode: 0o644, Size: int64(len(pj)), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR})
	tw.Write(pj)
	tw.WriteHeader(&tar.Header{Name: "release-notes/evil", Mode: 0o777, Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd", Format: tar.FormatUSTAR})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

// assertEmpty fails unless dir holds nothing: a refused export leaves no
// file and no temporary sibling.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused export left %v", ents)
	}
}

// Export checks what it carries but not the archive inside a layer: a
// layer holding a link entry is exported, refused by export --check (which
// writes nothing), and refused by whoever imports the tar (copy, pull).
func TestExportCheckFlag(t *testing.T) {
	clitest.OCIEnv(t)
	layout := examplePluginLayout(t)
	replaceLayer(t, layout, linkLayer(t))
	out := t.TempDir()
	tarFile := filepath.Join(out, "airgap.tar")
	var exported struct {
		Plugins []struct{ Name, Version string }
	}
	clitest.DecodeOne(t, mustRun(t, "export", "oci-layout:"+layout+":1.2.0", tarFile, "--json"), &exported)
	if len(exported.Plugins) != 1 || exported.Plugins[0].Name != "release-notes" || exported.Plugins[0].Version != "1.2.0" {
		t.Errorf("export --json: %+v", exported)
	}

	refused := t.TempDir()
	code, stdout, _ := runCLI(t, "export", "--check", "oci-layout:"+layout+":1.2.0", filepath.Join(refused, "airgap.tar"), "--json")
	if code != 1 || !strings.Contains(stdout, "symbolic link") {
		t.Errorf("export --check of a layer with a link: exit %d %s", code, stdout)
	}
	assertEmpty(t, refused)

	if code, stdout, _ := runCLI(t, "copy", "oci-layout:"+tarFile+":1.2.0", "oci-layout:"+filepath.Join(refused, "layout"), "--json"); code != 1 || !strings.Contains(stdout, "symbolic link") {
		t.Errorf("copy of the exported tar: exit %d %s", code, stdout)
	}
	if code, stdout, _ := runCLI(t, "pull", "oci-layout:"+tarFile+":1.2.0", filepath.Join(refused, "plugin"), "--json"); code != 1 || !strings.Contains(stdout, "symbolic link") {
		t.Errorf("pull of the exported tar: exit %d %s", code, stdout)
	}
	assertEmpty(t, refused)
}

// Export without --check still refuses a layer whose bytes are not the
// ones its descriptor names (found as the layer is copied into the tar):
// another byte, one byte less or more, or no file at all; and writes
// nothing.
func TestExportRefusesLayerDigestLie(t *testing.T) {
	clitest.OCIEnv(t)
	for _, c := range []struct {
		name   string
		change func(b []byte) []byte // nil: the file is removed
		code   int
		want   string
	}{
		{"another byte", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }, 1, command.CodeDigest},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }, 1, command.CodeDigest},
		{"one byte more", func(b []byte) []byte { return append(b, 0) }, 1, command.CodeDigest},
		{"missing", nil, 1, command.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			layout := examplePluginLayout(t)
			var manifest struct {
				Layers []struct{ Digest string }
			}
			idx := readFile(t, filepath.Join(layout, "index.json"))
			var index struct {
				Manifests []struct{ Digest string }
			}
			json.Unmarshal(idx, &index)
			json.Unmarshal(readFile(t, filepath.Join(layout, "blobs", "sha256", strings.TrimPrefix(index.Manifests[0].Digest, "sha256:"))), &manifest)
			layerFile := filepath.Join(layout, "blobs", "sha256", strings.TrimPrefix(manifest.Layers[0].Digest, "sha256:"))
			if c.change == nil {
				os.Remove(layerFile)
			} else {
				os.WriteFile(layerFile, c.change(readFile(t, layerFile)), 0o644)
			}
			for _, flags := range [][]string{nil, {"--check"}} {
				out := t.TempDir()
				args := append([]string{"export", "oci-layout:" + layout + ":1.2.0", filepath.Join(out, "airgap.tar"), "--json"}, flags...)
				code, stdout, _ := runCLI(t, args...)
				if code != c.code || !strings.Contains(stdout, `"`+c.want+`"`) {
					t.Errorf("export %v of a layer %s: exit %d %s, want exit %d and %q", flags, c.name, code, stdout, c.code, c.want)
				}
				assertEmpty(t, out)
			}
		})
	}
}
