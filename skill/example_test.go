package skill_test

import (
	"fmt"

	"github.com/plugkit/plugkit/skill"
)

func ExampleParse() {
	content := []byte(`---
name: pdf-processing
description: Extract PDF text, fill forms, merge files. Use when handling PDFs.
metadata:
  version: 1.0
x-owner: docs-team
---
# PDF processing
`)
	s, problems := skill.Parse(content, "pdf-processing", skill.Options{})
	fmt.Println(s.Name, s.Metadata["version"])
	fmt.Printf("%q\n", s.Body)
	for _, p := range problems {
		fmt.Printf("SKILL.md:%d:%d: %s[%s] %s\n", p.Line, p.Column, p.Severity, p.Code, p.Key)
	}
	// Output:
	// pdf-processing 1.0
	// "# PDF processing\n"
	// SKILL.md:6:1: warning[skill-unknown-field] /x-owner
}

func ExampleRender() {
	fmt.Print(skill.Render([]skill.Entry{{
		Name:        "pdf-processing",
		Description: "Extract text & tables from PDFs.",
		Location:    "/plugins/docs/skills/pdf-processing/SKILL.md",
	}}))
	// Output:
	// <available_skills>
	//   <skill>
	//     <name>pdf-processing</name>
	//     <description>Extract text &amp; tables from PDFs.</description>
	//     <location>/plugins/docs/skills/pdf-processing/SKILL.md</location>
	//   </skill>
	// </available_skills>
}
