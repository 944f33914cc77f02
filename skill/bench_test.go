package skill

import (
	"strings"
	"testing"
)

// typical is a SKILL.md of the usual shape: the optional keys, a little
// metadata and a body of a few kilobytes.
var typical = []byte(`---
name: pdf-processing
description: Extracts text and tables from PDF files, fills PDF forms, and merges multiple PDFs. Use when working with PDF documents or when the user mentions PDFs, forms, or document extraction.
license: Apache-2.0
compatibility: Requires Python 3.14+ and uv
allowed-tools: Bash(python:*) Read Write
metadata:
  author: example-org
  version: "1.0"
---
# PDF processing

## Steps

1. Run scripts/extract.py on the input file.
2. Check the output against references/FORMS.md.
3. Merge with scripts/merge.py when several files are given.
` + "\n" + longBody)

var longBody = strings.Repeat("Run the script, read its output, and explain it with `code` and [links](references/REFERENCE.md).\n", 40)

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(typical)))
	for b.Loop() {
		if s, _ := Parse(typical, "pdf-processing", Options{}); s == nil {
			b.Fatal("invalid")
		}
	}
}
