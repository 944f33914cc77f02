package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// words make text that compresses like source code and prose (about 3:1).
var words = strings.Fields(`the a plugin skill server agent file data return value error if else for
func var const type struct map string int bool nil true false import package config manifest
version name description path root command args env url header request response context
tool prompt resource schema json yaml markdown install update remove list verify digest
archive registry client session transport stdio http stream event message handler test`)

// generate writes a valid Agent Plugins 1.0.0 plugin with about files files
// and total bytes into dir: a manifest, two skills, a few executable
// scripts, mostly text resources and one file in twenty of random bytes.
func generate(dir string, files int, total int64) error {
	rng := rand.New(rand.NewPCG(1, uint64(files)))
	write := func(rel string, data []byte, mode os.FileMode) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, mode)
	}
	manifest := `{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"bench","version":"1.0.0","description":"generated for benchmarks"}` + "\n"
	if err := write("plugin.json", []byte(manifest), 0o644); err != nil {
		return err
	}
	for _, s := range []string{"build", "deploy"} {
		doc := fmt.Sprintf("---\nname: %s\ndescription: %s things for the benchmark.\n---\n\n%s\n", s, s, text(rng, 2000))
		if err := write("skills/"+s+"/SKILL.md", []byte(doc), 0o644); err != nil {
			return err
		}
	}
	rest := files - 3
	per := (total - int64(len(manifest)) - 4000) / int64(max(rest, 1))
	for i := range rest {
		size := int(per/2 + rng.Int64N(per+1)) // average per
		var rel string
		var data []byte
		mode := os.FileMode(0o644)
		switch {
		case i%20 == 19:
			rel = fmt.Sprintf("assets/d%02d/blob%05d.bin", i%97, i)
			data = make([]byte, size)
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
		case i%25 == 0:
			rel = fmt.Sprintf("scripts/tool%05d.sh", i)
			data = []byte("#!/bin/sh\n" + text(rng, size))
			mode = 0o755
		default:
			rel = fmt.Sprintf("lib/d%02d/f%05d.txt", i%97, i)
			data = []byte(text(rng, size))
		}
		if err := write(rel, data, mode); err != nil {
			return err
		}
	}
	return nil
}

// text returns about n bytes of word salad in lines.
func text(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	const ident = "abcdefghijklmnopqrstuvwxyz0123456789_"
	for b.Len() < n {
		if rng.IntN(8) == 0 { // an identifier or number of its own
			for range 3 + rng.IntN(6) {
				b.WriteByte(ident[rng.IntN(len(ident))])
			}
		} else {
			b.WriteString(words[rng.IntN(len(words))])
		}
		if rng.IntN(10) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()[:n]
}
