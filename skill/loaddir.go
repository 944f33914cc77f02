package skill

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Limits of LoadDir, the defaults of package snapshot, so that a skill
// directory loads alone exactly when it would load inside a plugin.
const (
	MaxFiles      = 10_000
	MaxFileBytes  = 16 << 20
	MaxTotalBytes = 64 << 20
)

// FileName is the file that makes a directory a skill.
const FileName = "SKILL.md"

// ErrLimit is wrapped by the error LoadDir returns when the directory
// exceeds MaxFiles, MaxFileBytes or MaxTotalBytes.
var ErrLimit = errors.New("skill directory exceeds a limit")

// LoadDir reads the skill directory dir: it parses dir/SKILL.md with the
// base name of dir as the directory name, and keeps every other regular
// file in Skill.Files. Reading never leaves dir: a link is followed only
// when its target stays inside (its bytes are kept under the link's own
// path); a link that escapes is reported as skill-link-escapes and not
// read, and links to directories, dangling links and special files are
// reported as skill-file-skipped. Links to directories are not followed,
// which rules out cycles.
//
// The error is for I/O failures, for a dir without a SKILL.md regular file
// and for limits (wrapping ErrLimit); problems in the content are reported
// as Problems, and the skill is nil when one of them is an error.
func LoadDir(dir string, opts Options) (*Skill, []Problem, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	r := dirReader{root: root, abs: abs, files: map[string][]byte{}}
	if err := fs.WalkDir(root.FS(), ".", r.visit); err != nil {
		return nil, nil, err
	}
	content, ok := r.files[FileName]
	if !ok {
		if hasError(r.problems) {
			return nil, r.problems, nil // SKILL.md is a link that escapes
		}
		return nil, r.problems, fmt.Errorf("%s: no %s regular file: %w", dir, FileName, fs.ErrNotExist)
	}
	delete(r.files, FileName)
	s, problems := Parse(content, filepath.Base(abs), opts)
	problems = append(r.problems, problems...)
	if s != nil {
		s.Files = r.files
	}
	return s, problems, nil
}

// dirReader collects the files of one skill directory.
type dirReader struct {
	root     *os.Root
	abs      string
	files    map[string][]byte
	total    int64
	problems []Problem
}

func (r *dirReader) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	switch t := d.Type(); {
	case d.IsDir():
		return nil
	case t.IsRegular():
		return r.read(p)
	case t&fs.ModeSymlink != 0:
		return r.link(p)
	default:
		r.skip(p, "it is not a regular file ("+t.String()+")")
		return nil
	}
}

// link reads the target of link p when it is a regular file inside the
// directory. os.Root refuses to resolve a link that escapes; a plain
// os.Stat then tells an escape from a dangling link.
func (r *dirReader) link(p string) error {
	info, err := r.root.Stat(p)
	switch {
	case err == nil && info.Mode().IsRegular():
		return r.read(p)
	case err == nil:
		r.skip(p, "it is a link to a directory or a special file, and such links are not followed")
	case isEscape(r.abs, p):
		sev := Warning
		if p == FileName {
			sev = Error
		}
		r.problems = append(r.problems, Problem{Severity: sev, Code: "skill-link-escapes", File: p,
			Message: fmt.Sprintf("%s is a link that resolves outside the skill directory; it was not read", p)})
	default:
		r.skip(p, "it is a dangling link")
	}
	return nil
}

// isEscape reports whether link p, unresolvable inside the root, resolves
// to something outside it.
func isEscape(abs, p string) bool {
	_, err := os.Stat(filepath.Join(abs, filepath.FromSlash(p)))
	return err == nil
}

func (r *dirReader) skip(p, why string) {
	r.problems = append(r.problems, Problem{Severity: Warning, Code: "skill-file-skipped", File: p,
		Message: fmt.Sprintf("%s was not read: %s", p, why)})
}

// read keeps the content of p, enforcing the limits while reading rather
// than trusting a size reported earlier.
func (r *dirReader) read(p string) error {
	if len(r.files) >= MaxFiles {
		return fmt.Errorf("more than %d files (MaxFiles): %w", MaxFiles, ErrLimit)
	}
	f, err := r.root.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return err
	}
	if len(b) > MaxFileBytes {
		return fmt.Errorf("%s is larger than %d bytes (MaxFileBytes): %w", p, MaxFileBytes, ErrLimit)
	}
	if r.total += int64(len(b)); r.total > MaxTotalBytes {
		return fmt.Errorf("the files total more than %d bytes (MaxTotalBytes): %w", MaxTotalBytes, ErrLimit)
	}
	r.files[path.Clean(p)] = b
	return nil
}
