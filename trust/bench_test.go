package trust

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/plugkit/plugkit/oci"
)

// countingTransport counts the HTTP requests a client makes.
type countingTransport struct {
	n  atomic.Int64
	rt http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// roundTrip is the mean time of a trivial request to the registry (GET
// /v2/) on a warm connection: the unit signing is measured in.
func roundTrip(b *testing.B, host string) time.Duration {
	b.Helper()
	c := &http.Client{}
	get := func() {
		resp, err := c.Get("http://" + host + "/v2/")
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	get()
	const n = 200
	start := time.Now()
	for range n {
		get()
	}
	return time.Since(start) / n
}

// BenchmarkVerifyRegistry3Signatures verifies a plugin with three
// signatures (cosign's and two of plugkit's) on a local docker-registry
// (tag schema), on a client whose connection is up. Target: under 50 ms.
func BenchmarkVerifyRegistry3Signatures(b *testing.B) {
	reg, name, subject := registryPlugin(b)
	ctx := context.Background()
	k1, k2 := newKey(b, "p256"), newKey(b, "p256")
	for _, k := range []*PrivateKey{k1, k2} {
		if _, err := Sign(ctx, openRepo(b, name), subject, k, nil); err != nil {
			b.Fatal(err)
		}
	}
	ct := &countingTransport{rt: http.DefaultTransport}
	repo, err := oci.NewRepository(name, oci.RemoteOptions{PlainHTTP: true, HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		b.Fatal(err)
	}
	v := &Verifier{Keys: []*PublicKey{k2.Public}}
	verify := func() {
		rep, err := v.VerifyOCI(ctx, repo, subject)
		if err != nil || len(rep.Signatures) != 3 || len(rep.Valid()) != 1 {
			b.Fatalf("%v %+v", err, rep)
		}
	}
	verify() // the connection is up, the referrers capability known
	rtt := roundTrip(b, reg.Host)
	ct.n.Store(0)
	b.ResetTimer()
	for b.Loop() {
		verify()
	}
	b.StopTimer()
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "ms/verify")
	b.ReportMetric(float64(ct.n.Load())/float64(b.N), "requests/op")
	b.ReportMetric(float64(rtt.Microseconds())/1000, "ms/round-trip")
}

// BenchmarkSignRegistry signs a plugin on a local docker-registry (tag
// schema, read back after the write) and relates the time to the
// requests it makes: target, signing dominated by the round
// trips. cpu-ms/op is the signing itself (statement, ECDSA, bundle JSON);
// raw-ms/op the same content pushed with no signing and no read-back (the
// read-back then waits two to three times the manifest push).
func BenchmarkSignRegistry(b *testing.B) {
	reg, name, subject := registryPlugin(b)
	ctx := context.Background()
	key := newKey(b, "p256")
	ct := &countingTransport{rt: http.DefaultTransport}
	repo, err := oci.NewRepository(name, oci.RemoteOptions{PlainHTTP: true, HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Sign(ctx, repo, subject, key, nil); err != nil { // the connection up
		b.Fatal(err)
	}
	rtt := roundTrip(b, reg.Host)
	stmt, _ := newStatement(subject.Digest, SignPredicateType, nil)
	cpuStart := time.Now()
	const cpuRuns = 50
	for range cpuRuns {
		if _, err := bundleDSSE(ctx, key, stmt); err != nil {
			b.Fatal(err)
		}
	}
	cpu := time.Since(cpuStart) / cpuRuns
	raw := rawAttach(b, repo, subject, key)
	ct.n.Store(0)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Sign(ctx, repo, subject, key, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	per := b.Elapsed() / time.Duration(b.N)
	reqs := float64(ct.n.Load()) / float64(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "ms/sign")
	b.ReportMetric(reqs, "requests/op")
	b.ReportMetric(float64(rtt.Microseconds())/1000, "ms/round-trip")
	b.ReportMetric(float64(cpu.Microseconds())/1000, "cpu-ms/op")
	b.ReportMetric(float64(per)/(reqs*float64(rtt)), "x-requests*rtt")
	b.ReportMetric(float64(raw.Microseconds())/1000, "raw-ms/op")
}

// rawAttach is the mean time to push what a signature is (bundle blob and
// referrer manifest, the tag-schema index updated by oras-go) with no
// signing and no reading back: the registry's share of a signature.
func rawAttach(b *testing.B, repo *oci.Repository, subject ocispec.Descriptor, key *PrivateKey) time.Duration {
	b.Helper()
	ctx := context.Background()
	const n = 10
	var total time.Duration
	for i := range n {
		stmt, _ := newStatement(subject.Digest, SignPredicateType, []byte(fmt.Sprintf(`{"raw":%d}`, i)))
		bundle, err := bundleDSSE(ctx, key, stmt)
		if err != nil {
			b.Fatal(err)
		}
		layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: digest.FromBytes(bundle), Size: int64(len(bundle))}
		m, _ := newReferrerManifest(subject, layer, SignPredicateType, time.Now())
		md := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(m), Size: int64(len(m)), ArtifactType: BundleMediaType}
		start := time.Now()
		if err := repo.Push(ctx, layer, bytes.NewReader(bundle)); err != nil {
			b.Fatal(err)
		}
		if err := repo.Push(ctx, md, bytes.NewReader(m)); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	return total / n
}
