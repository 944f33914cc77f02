package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/internal/hostile"
	"github.com/plugkit/plugkit/snapshot"
)

// generate writes a valid plugin of skills skills into dir, each a
// SKILL.md of the usual shape (every frontmatter key, a page of
// instructions) and files-1 reference files. It refuses a plugin the
// directory reader would refuse, so that no benchmark measures a refusal.
func generate(dir string, skills, files int) error {
	if total := skills*files + 1; total > snapshot.DefaultMaxFiles {
		return fmt.Errorf("%d skills of %d files and plugin.json make %d files, over the limit of %d", skills, files, total, snapshot.DefaultMaxFiles)
	}
	write := func(rel, content string) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}
	if err := write("plugin.json", string(hostile.Minimal)); err != nil {
		return err
	}
	body := strings.Repeat("Run the script, read its output, and explain it with `code` and [links](references/REFERENCE.md).\n", 40)
	for i := range skills {
		name := fmt.Sprintf("skill-%d", i)
		doc := "---\nname: " + name + "\ndescription: Does task " + name + " and reports the result. Use when the user asks for " + name +
			".\nlicense: Apache-2.0\ncompatibility: Requires Python 3.14+ and uv\nallowed-tools: Bash(python:*) Read Write\nmetadata:\n  author: example-org\n  version: \"1.0\"\n---\n\n# " +
			name + "\n\n" + body
		if err := write("skills/"+name+"/SKILL.md", doc); err != nil {
			return err
		}
		for j := 1; j < files; j++ {
			if err := write(fmt.Sprintf("skills/%s/references/ref-%d.md", name, j), strings.Repeat("reference text\n", 20)); err != nil {
				return err
			}
		}
	}
	return nil
}

// readAll reads every regular file below dir, one after another, and
// prints how many and their bytes.
func readAll(dir string) error {
	n, total := 0, 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		n, total = n+1, total+len(b)
		return err
	})
	fmt.Printf("files=%d bytes=%d\n", n, total)
	return err
}
