package oci_test

import (
	"errors"
	"strconv"
	"testing"

	measure "github.com/plugkit/plugkit/internal/hostile" // hostile names this package's artifacts
	"github.com/plugkit/plugkit/oci"
)

// layoutOfPlugins writes a layout whose index.json lists n distinct plugin
// manifests (entries without artifactType, so each must be read).
func layoutOfPlugins(t *testing.T, n int) *layoutBuilder {
	a := exampleArtifact(t)
	l := newLayout(t)
	cfg, layer := goodBlobs(l, a)
	for i := range n {
		m := pluginManifest(cfg, layer)
		m["annotations"] = map[string]string{"n": strconv.Itoa(i)}
		l.manifest(oci.ManifestMediaType, m, "")
	}
	return l
}

// Reading a layout that lists many plugin manifests without a digest costs
// linearly in their number, in CPU time and allocations (Linear of
// internal/hostile, from 1,000 to 8,000 manifests): the layout is opened,
// each manifest read once, and the refusal names them all.
func TestLayoutManyPluginsCostLinear(t *testing.T) {
	small, large := 1000, 8000
	if testing.Short() || raceEnabled {
		small, large = 250, 2000
	}
	pull := func(n int) func() {
		l := layoutOfPlugins(t, n)
		return func() {
			_, err := pullLayout(l, "", oci.PullOptions{})
			if !errors.Is(err, oci.ErrAmbiguous) {
				t.Fatalf("%d plugins read without a digest: %v", n, err)
			}
		}
	}
	measure.Linear(t, "many plugins", float64(large)/float64(small), pull(small), pull(large))
}
