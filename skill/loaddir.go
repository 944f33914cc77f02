package skill

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/plugkit/plugkit/snapshot"
)

// FileName is the file that makes a directory a skill.
const FileName = "SKILL.md"

// ErrLimit is matched by the error LoadDir returns when the directory
// exceeds a limit of package snapshot (its defaults: a skill directory
// loads alone exactly when it would load inside a plugin).
var ErrLimit = snapshot.ErrLimit

// LoadDir reads the skill directory dir: it parses dir/SKILL.md with the
// base name of dir as the directory name, and keeps every other regular
// file in Skill.Files, keyed by skill-relative path.
//
// The directory is read by snapshot.ReadDir, so it never leaves dir: a
// link is followed only when its target stays inside (its bytes are kept
// under the link's own path). A link that escapes is reported as
// skill-link-escapes (an error for SKILL.md itself, a warning otherwise);
// cycles, dangling links and special files as skill-file-skipped.
//
// The error is for I/O failures, for a dir without a SKILL.md regular file
// and for limits (wrapping ErrLimit); problems in the content are reported
// as Problems, and the skill is nil when one of them is an error.
func LoadDir(dir string, opts Options) (*Skill, []Problem, error) {
	snap, err := snapshot.ReadDir(dir, snapshot.Options{})
	if err != nil {
		return nil, nil, err
	}
	var problems []Problem
	for _, o := range snap.Omitted {
		p := Problem{Severity: Warning, Code: "skill-file-skipped", File: o.Path,
			Message: fmt.Sprintf("%s was not read: %s", o.Path, o.Reason)}
		if o.Reason == snapshot.ReasonEscape {
			p.Code = "skill-link-escapes"
			p.Message = fmt.Sprintf("%s is a link that resolves outside the skill directory; it was not read", o.Path)
			if o.Path == FileName {
				p.Severity = Error
			}
		}
		problems = append(problems, p)
	}
	content, ok := snap.Files[FileName]
	if !ok {
		if hasError(problems) {
			return nil, problems, nil // SKILL.md is a link that escapes
		}
		return nil, problems, fmt.Errorf("%s: no %s regular file: %w", dir, FileName, fs.ErrNotExist)
	}
	delete(snap.Files, FileName)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	s, more := Parse(content, filepath.Base(abs), opts)
	problems = append(problems, more...)
	if s != nil {
		s.Files = snap.Files
	}
	return s, problems, nil
}
