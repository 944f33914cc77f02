package mcprun_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/mcprun"
)

// Plan shows, without starting anything, how a stdio server will be
// launched: placeholders expanded once, the command one token, the
// reserved variables set last.
func ExamplePlan() {
	root, _ := os.MkdirTemp("", "plugin-")
	defer os.RemoveAll(root)
	root, _ = filepath.EvalSymlinks(root)
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	os.WriteFile(filepath.Join(root, "bin", "validator"), []byte("#!/bin/sh\n"), 0o755)

	pkg := &agentplugin.Package{Name: "devtools"}
	srv := agentplugin.Server{
		ID: "devtools/validator", Name: "validator", Type: agentplugin.Stdio,
		Command: "./bin/validator",
		Args:    []string{"--data", "${PLUGIN_DATA}/validator", "$HOME stays"},
		Env:     map[string]string{"CONFIG": "${PLUGIN_ROOT}/config.json"},
	}
	plan, err := mcprun.Plan(pkg, srv, mcprun.PlanOptions{
		Root:    root,
		DataDir: "/var/lib/agent/data/devtools",
		BaseEnv: []string{"LANG=C.UTF-8"},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The temporary root differs on every run; print it as ROOT.
	show := func(s string) string { return strings.ReplaceAll(s, root, "ROOT") }
	fmt.Println("path:", show(plan.Path))
	fmt.Printf("args: %q\n", plan.Args[1:])
	fmt.Println("dir: ", show(plan.Dir))
	for _, kv := range plan.Env {
		fmt.Println("env: ", show(kv))
	}
	// Output:
	// path: ROOT/bin/validator
	// args: ["--data" "/var/lib/agent/data/devtools/validator" "$HOME stays"]
	// dir:  ROOT
	// env:  LANG=C.UTF-8
	// env:  CONFIG=ROOT/config.json
	// env:  PLUGIN_ROOT=ROOT
	// env:  PLUGIN_DATA=/var/lib/agent/data/devtools
}
