package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

// Modes of the files of a stored tree: read-only, executable or not.
const (
	modeFile fs.FileMode = 0o444
	modeExec fs.FileMode = 0o555
	modeDir  fs.FileMode = 0o555
)

// storeMode is the mode a file of the snapshot gets in the store: 0555
// when any execute bit is set (as `plugkit pack` makes it 0755), else 0444.
func storeMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return modeExec
	}
	return modeFile
}

// FileList is a stored tree's .files: what every file of the tree must
// hold. Its archive digest ties it to the lock entry.
type FileList struct {
	ArchiveDigest string     `json:"archiveDigest"`
	Files         []FileInfo `json:"files"`
}

// FileInfo is one file of a stored tree.
type FileInfo struct {
	Path string `json:"path"`
	// Mode is "0444" or "0555".
	Mode string `json:"mode"`
	// SHA256 is the hex sha256 of the file's bytes.
	SHA256 string `json:"sha256"`
}

// newFileList lists the files of snap as they are stored.
func newFileList(snap *snapshot.Snapshot, digest string) *FileList {
	l := &FileList{ArchiveDigest: digest, Files: make([]FileInfo, 0, len(snap.Files))}
	for _, p := range snap.Paths() {
		sum := sha256.Sum256(snap.Files[p])
		l.Files = append(l.Files, FileInfo{Path: p, Mode: fmt.Sprintf("%04o", storeMode(snap.Mode(p))), SHA256: hex.EncodeToString(sum[:])})
	}
	return l
}

// Encode writes the list one file per line, so that a diff of two lists
// reads like a diff of the trees.
func (l *FileList) Encode() []byte {
	var b bytes.Buffer
	b.WriteString(`{"archiveDigest": `)
	writeJSONString(&b, l.ArchiveDigest)
	b.WriteString(", \"files\": [")
	for i, f := range l.Files {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n  {\"path\": ")
		writeJSONString(&b, f.Path)
		b.WriteString(`, "mode": "` + f.Mode + `", "sha256": "` + f.SHA256 + `"}`)
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // a string always encodes
	b.Write(enc)
}

// ErrFileList is matched by the errors of a malformed .files list.
var ErrFileList = errors.New("invalid file list")

// parseFileList reads a .files list and checks its shape: a digest, clean
// sorted unique paths, known modes and hex digests.
func parseFileList(b []byte) (*FileList, error) {
	var l FileList
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFileList, err)
	}
	if _, err := archive.ParseDigest(l.ArchiveDigest); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFileList, err)
	}
	for i, f := range l.Files {
		if err := snapshot.CheckPath(f.Path); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFileList, err)
		}
		if i > 0 && l.Files[i-1].Path >= f.Path {
			return nil, fmt.Errorf("%w: %q is out of order or listed twice", ErrFileList, f.Path)
		}
		if f.Mode != "0444" && f.Mode != "0555" {
			return nil, fmt.Errorf("%w: %q: mode %q", ErrFileList, f.Path, f.Mode)
		}
		if _, err := archive.ParseDigest("sha256:" + f.SHA256); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrFileList, f.Path, err)
		}
	}
	return &l, nil
}

// Problem is one way a stored tree differs from its file list.
type Problem struct {
	Path string `json:"path"`
	// Kind is "modified", "missing" or "extra".
	Kind string `json:"kind"`
	// Detail says what differs for a modified file.
	Detail string `json:"detail,omitempty"`
}

func (p Problem) String() string {
	if p.Detail != "" {
		return p.Kind + ": " + p.Path + " (" + p.Detail + ")"
	}
	return p.Kind + ": " + p.Path
}

// verifyTree compares the tree at dir with list: every listed file must be
// a regular file with its mode and bytes, and nothing else may be there.
// Links are never followed (they are reported), and nothing is opened
// outside dir. The problems come sorted by path.
func verifyTree(dir string, list *FileList) ([]Problem, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	want := make(map[string]FileInfo, len(list.Files))
	dirs := map[string]bool{}
	for _, f := range list.Files {
		want[f.Path] = f
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var problems []Problem
	seen := make(map[string]bool, len(list.Files))
	h := sha256.New()
	buf := make([]byte, 64<<10)
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		f, listed := want[p]
		switch {
		case d.IsDir() && dirs[p]:
			return nil
		case d.IsDir():
			problems = append(problems, Problem{Path: p + "/", Kind: "extra"})
			return fs.SkipDir
		case !listed:
			problems = append(problems, Problem{Path: p, Kind: "extra"})
			return nil
		}
		seen[p] = true
		if !d.Type().IsRegular() {
			problems = append(problems, Problem{Path: p, Kind: "modified", Detail: "not a regular file"})
			return nil
		}
		detail, err := checkFile(root, p, f, h, buf)
		if err != nil {
			return err
		}
		if detail != "" {
			problems = append(problems, Problem{Path: p, Kind: "modified", Detail: detail})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range list.Files {
		if !seen[f.Path] {
			problems = append(problems, Problem{Path: f.Path, Kind: "missing"})
		}
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].Path < problems[j].Path })
	return problems, nil
}

// checkFile hashes one file and says how it differs from f, "" when not.
func checkFile(root *os.Root, p string, f FileInfo, h hash.Hash, buf []byte) (string, error) {
	file, err := root.Open(p)
	if err != nil {
		return "", err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "not a regular file", nil
	}
	h.Reset()
	if _, err := io.CopyBuffer(h, file, buf); err != nil {
		return "", err
	}
	detail := ""
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		detail = "content differs"
	}
	if mode := fmt.Sprintf("%04o", fi.Mode().Perm()); mode != f.Mode {
		if detail != "" {
			detail += ", "
		}
		detail += "mode " + mode + ", want " + f.Mode
	}
	return detail, nil
}
