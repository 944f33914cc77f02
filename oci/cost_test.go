package oci_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	measure "github.com/plugkit/plugkit/internal/hostile"
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
// time linear in their number: the layout is opened, each manifest read
// once, and the refusal names them all. CPU time is judged as growth from
// 1,000 to 8,000 manifests (a quadratic cost grows 64 times, a linear one
// 8; the slack of three absorbs a loaded machine).
func TestLayoutManyPluginsCostLinear(t *testing.T) {
	small, large := 1000, 8000
	if testing.Short() || raceEnabled {
		small, large = 250, 2000
	}
	cost := func(n int) time.Duration {
		l := layoutOfPlugins(t, n)
		return measure.LeastCPU(3, func() {
			_, err := pullLayout(l, "", oci.PullOptions{})
			if !errors.Is(err, oci.ErrAmbiguous) {
				t.Fatalf("%d plugins read without a digest: %v", n, err)
			}
		})
	}
	c1, c2 := cost(small), cost(large)
	growth := float64(large) / float64(small)
	ratio := float64(c2) / float64(max(c1, time.Millisecond))
	t.Logf("CPU %v for %d manifests, %v for %d (x%.1f)", c1, small, c2, large, ratio)
	if ratio > 3*growth {
		t.Errorf("time grew %.1f times for %.0f times the manifests: not linear", ratio, growth)
	}
}
