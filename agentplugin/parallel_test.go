package agentplugin_test

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/snapshot"
)

// TestSkillsParsedInParallelSameResult: with many skills, their SKILL.md
// files are parsed on every CPU; the package and its diagnostics, in
// order, are exactly those of a parse on one CPU.
func TestSkillsParsedInParallelSameResult(t *testing.T) {
	files := map[string][]byte{"plugin.json": []byte(minimal)}
	for i := range 300 {
		name := fmt.Sprintf("s%03d", i)
		doc := skillDoc(name)
		switch i % 7 {
		case 1:
			doc = "---\nname: " + name + "\n---\n" // no description
		case 2:
			doc = "---\nname: " + name + "\ndescription: d\nx: &a [*a]\n---\n"
		case 3:
			doc = "no frontmatter"
		case 4:
			doc = skillDoc(name) + "\n" // a trailing line
			files["skills/"+name+"/refs/a.md"] = []byte("ref")
		}
		files["skills/"+name+"/SKILL.md"] = []byte(doc)
	}
	files["skills/empty/x.txt"] = []byte("not a skill")
	s, err := snapshot.FromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	load := func(cpus int) verdict {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cpus))
		v, err := verdictOf(agentplugin.Load(s, agentplugin.Options{Limits: agentplugin.Limits{MaxDiagnostics: 10_000}}))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	serial, parallel := load(1), load(4)
	if len(serial.Skills) < 100 || len(serial.Diagnostics) < 100 {
		t.Fatalf("the plugin exercises too little: %d skills, %d diagnostics", len(serial.Skills), len(serial.Diagnostics))
	}
	if !reflect.DeepEqual(serial, parallel) {
		t.Errorf("parallel parse differs:\nserial   %v\nparallel %v", serial, parallel)
	}
}
