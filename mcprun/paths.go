package mcprun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// resolve returns the filesystem-resolved form of the absolute path p:
// every link followed, "." and ".." applied after each link (as the kernel
// does), never lexically before. A missing tail is allowed so that a plan
// can be made before PLUGIN_DATA exists; it is appended as is, and refused
// if it holds "." or "..", since those can only be judged on disk.
func resolve(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var missing []string
	dir := p
	for {
		dir = strings.TrimRight(dir, string(filepath.Separator))
		parent, base := filepath.Split(dir)
		if base == "" || parent == "" {
			return "", err // nothing on the path exists
		}
		if base == "." || base == ".." {
			return "", fmt.Errorf("%w: %s cannot be resolved: %v", ErrEscape, p, err)
		}
		missing = append([]string{base}, missing...)
		dir = parent
		real, err2 := filepath.EvalSymlinks(dir)
		if err2 == nil {
			return filepath.Join(append([]string{real}, missing...)...), nil
		}
		if !errors.Is(err2, fs.ErrNotExist) {
			return "", err2
		}
	}
}

// within reports whether the resolved path p is base or below it.
func within(p, base string) bool {
	if p == base {
		return true
	}
	if base == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, base+string(filepath.Separator))
}

// resolveWithin resolves p and checks it stays inside the resolved base.
// what names the field in the error.
func resolveWithin(what, p, base string) (string, error) {
	real, err := resolve(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if !within(real, base) {
		return "", fmt.Errorf("%s %q resolves outside %s: %w", what, p, base, ErrEscape)
	}
	return real, nil
}

// resolveCommand turns the configured command token into the executable to
// run and argv[0]. A "./" path must resolve, links included, to a regular
// file with an execute bit inside root; argv[0] is then the absolute path
// as configured (not the link target), so that multi-call binaries still
// see the name they were invoked by. A bare name is looked up with
// lookPath, on the client's search path.
func resolveCommand(command, root string, lookPath func(string) (string, error)) (path, argv0 string, err error) {
	switch {
	case strings.HasPrefix(command, "./"):
		rel := command[2:]
		if rel == "" || strings.ContainsRune(rel, 0) {
			return "", "", fmt.Errorf("command %q: %w", command, ErrInvalidCommand)
		}
		// Join without cleaning: "./bin/link/.." must be judged on disk.
		abs := root + string(filepath.Separator) + filepath.FromSlash(rel)
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", "", fmt.Errorf("command %q: %w: %v", command, ErrNotExecutable, err)
			}
			return "", "", fmt.Errorf("command %q: %w", command, err)
		}
		if !within(real, root) {
			return "", "", fmt.Errorf("command %q resolves outside the plugin root: %w", command, ErrEscape)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return "", "", fmt.Errorf("command %q: %w", command, err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return "", "", fmt.Errorf("command %q: %w", command, ErrNotExecutable)
		}
		return real, abs, nil
	case command == "" || strings.ContainsAny(command, "/\\\x00") || command == "." || command == "..":
		return "", "", fmt.Errorf("command %q: %w", command, ErrInvalidCommand)
	default:
		found, err := lookPath(command)
		if err != nil {
			return "", "", fmt.Errorf("command %q: %w: %v", command, ErrNotFound, err)
		}
		if !filepath.IsAbs(found) {
			// exec.LookPath refuses "." entries (ErrDot); a custom
			// lookPath must not smuggle a relative result in either,
			// since it would be resolved against cwd, not the search path.
			return "", "", fmt.Errorf("command %q: %w: %q is not absolute", command, ErrNotFound, found)
		}
		return found, command, nil
	}
}
