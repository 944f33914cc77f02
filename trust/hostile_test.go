package trust

import (
	"context"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/plugkit/plugkit/internal/hostile"
)

// allocated runs f and returns the heap bytes it allocated and the time
// it took.
func allocated(f func()) (uint64, time.Duration) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	runtime.GC()
	metrics.Read(s)
	before := s[0].Value.Uint64()
	start := time.Now()
	f()
	d := time.Since(start)
	metrics.Read(s)
	return s[0].Value.Uint64() - before, d
}

// bigStatementBundle is a valid signed bundle whose statement carries a
// predicate of about size bytes in the given shape.
func bigStatementBundle(t *testing.T, key *PrivateKey, size int, shape string) []byte {
	t.Helper()
	var pred string
	switch shape {
	case "long string":
		pred = `{"x":"` + strings.Repeat("a", size) + `"}`
	case "many members":
		var b strings.Builder
		b.WriteString("{")
		for i := 0; b.Len() < size; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"k` + strings.Repeat("0", 6) + itoa(i) + `":[1,2,3]`)
		}
		b.WriteString("}")
		pred = b.String()
	case "deep arrays":
		n := min(size/2, 9000) // encoding/json refuses deeper than 10000
		pred = `{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `,"pad":"` + strings.Repeat("a", max(0, size-2*n)) + `"}`
	}
	stmt, err := newStatement(goldenPlugin, SignPredicateType, []byte(pred))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundleDSSE(context.Background(), key, stmt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(buf[n:])
		}
	}
}

// TestHostileBundleCostsItsSize verifies signed bundles of 1 and 16 MiB (a
// quarter of that under the race detector) in several shapes: each
// allocates within a small multiple of its size, and CPU time and
// allocations grow linearly (hostile.Linear).
func TestHostileBundleCostsItsSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 16 MiB bundles")
	}
	key := newKey(t, "p256")
	v := &Verifier{Keys: []*PublicKey{key.Public}, Limits: Limits{MaxBundleBytes: 64 << 20}}
	unit := 1 << 20
	if raceEnabled {
		unit = 256 << 10
	}
	for _, shape := range []string{"long string", "many members", "deep arrays"} {
		verify := func(size int) (func(), int) {
			b := bigStatementBundle(t, key, size*3/4, shape) // base64 grows it by 4/3
			return func() {
				bu, err := parseBundle(b)
				if err == nil {
					_, err = v.checkBundle(bu, true, digestArtifact(goldenPlugin))
				}
				if err != nil {
					t.Fatalf("%s, %d bytes: %v", shape, len(b), err)
				}
			}, len(b)
		}
		small, smallSize := verify(unit)
		large, largeSize := verify(16 * unit)
		s, l := hostile.Linear(t, shape, float64(largeSize)/float64(smallSize), small, large)
		for _, c := range []struct {
			cost hostile.Cost
			size int
		}{{s, smallSize}, {l, largeSize}} {
			if ratio := float64(c.cost.Bytes) / float64(c.size); ratio > 12 {
				t.Errorf("%s, %d bytes: allocated %.1fx the bundle's size", shape, c.size, ratio)
			}
		}
	}
}

// TestHostileManyReferrers: a subject with far more bundle referrers than
// MaxSignatures costs MaxSignatures checks.
func TestHostileManyReferrers(t *testing.T) {
	store, _ := goldenLayout(t)
	subject := resolveRef(t, store, "1.2.0")
	junk := newKey(t, "p256")
	for i := range 150 {
		stmt, _ := newStatement(subject.Digest, SignPredicateType, []byte(`{"n":`+itoa(i)+`}`))
		b, err := bundleDSSE(context.Background(), junk, stmt)
		if err != nil {
			t.Fatal(err)
		}
		attachForTest(t, store, subject, b)
	}
	v := &Verifier{Keys: []*PublicKey{goldenPublicKey(t, "cosign.pub")}, Limits: Limits{MaxSignatures: 50}}
	rep, _ := v.VerifyOCI(context.Background(), store, subject)
	if len(rep.Signatures) != 50 || rep.Unchecked != 101 {
		t.Fatalf("checked %d, unchecked %d", len(rep.Signatures), rep.Unchecked)
	}
}

// TestHostilePolicyShapes: a policy file is bounded by MaxPolicyBytes
// whatever its shape; nesting and YAML aliases are refused cheaply.
func TestHostilePolicyShapes(t *testing.T) {
	aliases := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 0, "a"; i < 12; i++ {
		name := string(rune('b' + i))
		aliases += name + ": &" + name + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = name
	}
	for _, c := range []struct{ name, doc string }{
		{"deep JSON", strings.Repeat("[", 100000) + strings.Repeat("]", 100000)},
		{"deep YAML", strings.Repeat("- ", 50000) + "x\n"},
		{"YAML aliases", aliases + "rules: []\n"},
	} {
		yamlDoc := !strings.HasPrefix(c.doc, "[")
		var err error
		heap, d := allocated(func() { _, err = ParsePolicy(c.name, []byte(c.doc), t.TempDir(), yamlDoc) })
		if err == nil {
			t.Errorf("%s: accepted", c.name)
		}
		if heap > 64<<20 || d > 10*time.Second {
			t.Errorf("%s: %d MiB, %v", c.name, heap>>20, d)
		}
		t.Logf("%s: %v (%d KiB, %v)", c.name, err, heap>>10, d)
	}
}
