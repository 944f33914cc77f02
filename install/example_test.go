package install_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/plugkit/plugkit/install"
	"github.com/plugkit/plugkit/source"
)

// A host lists what a home holds and checks each plugin's tree before it
// first runs it from the store, with its data directory as PLUGIN_DATA.
func ExampleHome_List() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	plugin := filepath.Join(dir, "hello")
	os.MkdirAll(filepath.Join(plugin, "skills", "greet"), 0o755)
	os.WriteFile(filepath.Join(plugin, "plugin.json"), []byte(`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "hello", "version": "1.0.0"}`), 0o644)
	os.WriteFile(filepath.Join(plugin, "skills", "greet", "SKILL.md"), []byte("---\nname: greet\ndescription: Greets.\n---\nSay hello.\n"), 0o644)

	home, _ := install.Open(filepath.Join(dir, "home"), install.Options{})
	yes := func(context.Context, *install.Change) (bool, error) { return true, nil }
	src, _ := source.Parse(plugin, source.ParseOptions{})
	if _, err := home.Install(context.Background(), []source.Source{src}, install.InstallOptions{Consent: yes}); err != nil {
		fmt.Println(err)
		return
	}

	plugins, _ := home.List()
	for _, p := range plugins {
		if err := home.Verify(&p); err != nil {
			fmt.Println("refused:", err)
			continue
		}
		rel, _ := filepath.Rel(home.Dir(), p.Path)
		fmt.Println(p.Name, p.Version, p.Skills, filepath.ToSlash(filepath.Dir(rel)), filepath.Base(p.DataDir))
	}
	// Output: hello 1.0.0 [greet] store/sha256 hello
}
