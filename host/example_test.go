package host_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/host"
)

// ToolName gives each tool one name that strict clients accept and that
// depends on its plugin, server and tool alone.
func ExampleToolName() {
	fmt.Println(host.ToolName("acme", "db", "run_query"))
	fmt.Println(host.ToolName("acme.tools", "db", "run_query"))
	// Output:
	// acme_db_run_query
	// acme_tools_db_run_query__2b62115a
}

// A host is the skills provider of its plugins: skills by canonical ID,
// the prompt block, and each skill's files, read only inside the skill.
func ExampleHost_Skill() {
	root, _ := os.MkdirTemp("", "plugin-")
	defer os.RemoveAll(root)
	write := func(p, content string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(content), 0o644)
	}
	write("plugin.json", `{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "devtools"}`)
	write("skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the service.\n---\nRun scripts/go.sh.\n")
	write("skills/deploy/scripts/go.sh", "#!/bin/sh\n")

	pkg, err := agentplugin.LoadDir(root, agentplugin.Options{})
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.New([]host.Plugin{{Package: pkg, Root: root}}, host.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	s, err := h.Skill("devtools/deploy")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s\n%s", s.ID, s.Description, s.Body)
	fmt.Println(s.Files)
	b, _ := h.ReadResource("devtools/deploy", "scripts/go.sh")
	fmt.Printf("%q\n", b)
	_, err = h.ReadResource("devtools/deploy", "../../plugin.json")
	fmt.Println(err)
	// Output:
	// devtools/deploy: Deploy the service.
	// Run scripts/go.sh.
	// [SKILL.md scripts/go.sh]
	// "#!/bin/sh\n"
	// path escapes the skill directory: "../../plugin.json"
}

// The shortest host: load a plugin directory, serve it, and give the
// model its skills. Tools work the same way (h.Tools, h.CallTool) once
// the plugin has a DataDir for its stdio servers.
func Example() {
	p, err := host.LoadPlugin("../examples/release-notes", agentplugin.Options{})
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.New([]host.Plugin{p}, host.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	for _, s := range h.Skills() {
		fmt.Println(s.ID)
	}
	// Output:
	// release-notes/changelog
	// release-notes/semver-check
}
