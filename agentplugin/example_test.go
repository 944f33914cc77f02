package agentplugin_test

import (
	"fmt"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/skill"
	"github.com/plugkit/plugkit/snapshot"
)

func ExampleLoad() {
	s, _ := snapshot.FromFiles(map[string][]byte{
		"plugin.json":           []byte(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "demo", "homepage": 7}`),
		"skills/greet/SKILL.md": []byte("---\nname: greet\ndescription: Greets the user.\n---\nSay hello.\n"),
	})
	_, err := agentplugin.Load(s, agentplugin.Options{})
	if ds, rejected := agentplugin.Diagnostics(err); rejected {
		for _, d := range ds {
			fmt.Println(d)
		}
	}
	// Output: plugin.json:1:103: error[manifest-field-type]: "homepage" must be a string, not a number
}

func ExampleLoadDir() {
	pkg, err := agentplugin.LoadDir("../examples/release-notes", agentplugin.Options{})
	if err != nil {
		panic(err)
	}
	for _, s := range pkg.Skills {
		fmt.Println(s.ID)
	}
	for _, s := range pkg.Servers {
		fmt.Println(s.ID, s.Type)
	}
	fmt.Println(pkg.MCP, len(pkg.Diagnostics))
	// Output:
	// release-notes/changelog
	// release-notes/semver-check
	// release-notes/git-log stdio
	// release-notes/tracker streamable-http
	// configured 0
}

func ExamplePackage_SkillEntries() {
	pkg, err := agentplugin.LoadDir("../examples/release-notes", agentplugin.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Print(skill.Render(pkg.SkillEntries("/plugins/release-notes")[1:]))
	// Output:
	// <available_skills>
	//   <skill>
	//     <name>semver-check</name>
	//     <description>Decide whether the next release is a major, minor or patch bump from the changes since the last tag. Use before tagging a release.</description>
	//     <location>/plugins/release-notes/skills/semver-check/SKILL.md</location>
	//     <compatibility>Requires git</compatibility>
	//     <allowed-tools>Bash(git:*) Read</allowed-tools>
	//   </skill>
	// </available_skills>
}
