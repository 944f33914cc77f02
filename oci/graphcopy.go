package oci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
)

// copyConcurrency is how many transfers a copy of referrers from a source
// other than a layout being exported keeps going at once: oras-go's
// default, under which plugkit copied them before it had a walk of its
// own.
const copyConcurrency = 3

// CopyError is an error of the copy of a plugin's referrers (Copy,
// CopyPulled, Export): the operation that failed, on which node, and
// whether the source or the destination failed it. errors.Is sees
// through it to Err.
type CopyError struct {
	// Op is Exists or Push (on the destination), Fetch, FindSuccessors
	// or FindPredecessors (on the source), as oras-go's CopyError names
	// them.
	Op string
	// Digest is the node Op was about.
	Digest digest.Digest
	// Destination tells the destination's failures from the source's.
	Destination bool
	// Err is the error of Op.
	Err error
}

// Error reads as oras-go's CopyError did, with the node's digest.
func (e *CopyError) Error() string {
	side := "source"
	if e.Destination {
		side = "destination"
	}
	return fmt.Sprintf("failed to perform %q of %s on %s: %v", e.Op, e.Digest, side, e.Err)
}

// Unwrap is Err, for errors.Is and errors.As.
func (e *CopyError) Unwrap() error { return e.Err }

// copyDst is where a graphCopy puts nodes.
type copyDst interface {
	Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error)
	Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error
}

// graphCopy copies the referrers above a node, transitively, with what
// they list, from src to dst: the walk of oras-go's ExtendedCopyGraph.
// The referrers are found first, up to the roots (the nodes with no
// referrer); then every root is copied with what it lists, each node
// after its successors. A node dst has already is skipped with all below
// it, a foreign layer is never copied, and a node dst refuses with
// errdef.ErrAlreadyExists is copied. Each manifest is read from src once:
// the bytes read to find its subject or its successors are those pushed.
type graphCopy struct {
	src content.ReadOnlyGraphStorage
	dst copyDst
	// put copies one node, its successors copied; nil is fetchPush. A
	// stage of a layout's blobs sets it to stage them unread.
	put func(ctx context.Context, desc ocispec.Descriptor) error
	// sem holds a place for every transfer under way; nil walks one node
	// at a time, on the caller's goroutine, for a source whose transfers
	// cost less than goroutines would (a layout staged unread).
	sem chan struct{}

	mu        sync.Mutex
	nodes     map[graphNode]nodeCopy
	manifests map[digest.Digest][]byte // read from src, verified
}

// nodeCopy is the copy of one node: done is closed when it is over, with
// err its outcome. A walk on the caller's goroutine needs no done: a node
// it reaches again is copied already.
type nodeCopy struct {
	done chan struct{}
	err  error
}

// graphNode is a node of a walk through a graph as oras-go tells nodes
// apart: by media type, digest and size.
type graphNode struct {
	mediaType string
	digest    digest.Digest
	size      int64
}

func nodeOf(d ocispec.Descriptor) graphNode { return graphNode{d.MediaType, d.Digest, d.Size} }

// newGraphCopy is a copy from src to dst with at most concurrency
// transfers at once; 1 walks on the caller's goroutine.
func newGraphCopy(src content.ReadOnlyGraphStorage, dst copyDst, concurrency int) *graphCopy {
	w := &graphCopy{src: src, dst: dst, nodes: map[graphNode]nodeCopy{}, manifests: map[digest.Digest][]byte{}}
	if concurrency > 1 {
		w.sem = make(chan struct{}, concurrency)
	}
	return w
}

// copyReferrers copies the referrers above node and returns their
// descriptors, sorted by digest.
func (w *graphCopy) copyReferrers(ctx context.Context, node ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	found, roots, err := w.findRoots(ctx, node)
	if err == nil {
		err = w.each(ctx, roots, func(ctx context.Context, _ int, root ocispec.Descriptor) error {
			return w.copyGraph(ctx, root)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("copy referrers of %s: %w", node.Digest, err)
	}
	return byDigest(found), nil
}

// findRoots finds the referrers above node, depth first, and the roots
// among them (node itself when it has no referrer).
func (w *graphCopy) findRoots(ctx context.Context, node ocispec.Descriptor) (found, roots []ocispec.Descriptor, err error) {
	seen := map[graphNode]bool{}
	for stack := []ocispec.Descriptor{node}; len(stack) > 0; {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[nodeOf(cur)] {
			continue
		}
		seen[nodeOf(cur)] = true
		refs, err := w.referrersOf(ctx, cur)
		if err != nil {
			return nil, nil, &CopyError{Op: "FindPredecessors", Digest: cur.Digest, Err: err}
		}
		found = append(found, refs...)
		if len(refs) == 0 {
			roots = append(roots, cur)
		}
		for _, r := range refs {
			if !seen[nodeOf(r)] {
				stack = append(stack, r)
			}
		}
	}
	return found, roots, nil
}

// referrersOf keeps, of the predecessors src knows of desc, the manifests
// whose subject is desc: in a layout, an index that merely lists desc is a
// predecessor too, and is not carried along. The referrers read are kept
// for their copy.
func (w *graphCopy) referrersOf(ctx context.Context, desc ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	preds, err := w.src.Predecessors(ctx, desc)
	if err != nil {
		return nil, err
	}
	var cands []ocispec.Descriptor // not preds, which may be src's own
	for _, p := range preds {
		if isManifestType(p.MediaType) {
			cands = append(cands, p)
		}
	}
	keep := make([]bool, len(cands))
	err = w.each(ctx, cands, func(ctx context.Context, i int, p ocispec.Descriptor) error {
		b, err := w.fetchManifest(ctx, p)
		if err != nil {
			return fmt.Errorf("referrer %s: %w", p.Digest, err)
		}
		var m referrerDoc
		if strictDecode(heldManifest(w.src, p.Digest), b, &m, (*manifestFields).referrerDoc) != nil || m.Subject == nil || m.Subject.Digest != desc.Digest {
			return nil
		}
		// The type is the manifest's own, as the referrers API defines
		// it, not what the source listed: some registries list the
		// config's media type whatever the artifactType, and a layout
		// lists none.
		p.ArtifactType = m.ArtifactType
		if p.ArtifactType == "" {
			p.ArtifactType = m.Config.MediaType
		}
		w.mu.Lock()
		w.manifests[p.Digest] = b
		w.mu.Unlock()
		cands[i], keep[i] = p, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []ocispec.Descriptor
	for i, p := range cands {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out, nil
}

// fetchManifest reads the manifest desc from src (or what was read of it
// already), verified, within DefaultMaxManifestBytes.
func (w *graphCopy) fetchManifest(ctx context.Context, desc ocispec.Descriptor) ([]byte, error) {
	w.mu.Lock()
	b, ok := w.manifests[desc.Digest]
	w.mu.Unlock()
	if ok && int64(len(b)) == desc.Size {
		return b, nil
	}
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	defer w.release()
	return fetchVerified(ctx, w.src, desc, DefaultMaxManifestBytes, "MaxManifestBytes")
}

// copyGraph copies desc with what it lists, once: a node reached again,
// through another referrer, is waited for. (A node below itself would
// take a sha256 fixed point: every manifest is verified as it is read.)
func (w *graphCopy) copyGraph(ctx context.Context, desc ocispec.Descriptor) error {
	n := nodeOf(desc)
	w.mu.Lock()
	c, seen := w.nodes[n]
	if !seen {
		if w.sem != nil {
			c.done = make(chan struct{})
		}
		w.nodes[n] = c
	}
	w.mu.Unlock()
	if seen {
		if c.done != nil {
			select {
			case <-c.done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.nodes[n].err
	}
	err := w.copyNode(ctx, desc)
	w.mu.Lock()
	w.nodes[n] = nodeCopy{c.done, err}
	w.mu.Unlock()
	if c.done != nil {
		close(c.done)
	}
	return err
}

// copyNode copies desc, unless dst has it, after its successors.
func (w *graphCopy) copyNode(ctx context.Context, desc ocispec.Descriptor) error {
	succ, skip, err := w.successors(ctx, desc)
	if err != nil || skip {
		return err
	}
	if err := w.each(ctx, succ, func(ctx context.Context, _ int, d ocispec.Descriptor) error {
		return w.copyGraph(ctx, d)
	}); err != nil {
		return err
	}
	if err := w.acquire(ctx); err != nil {
		return err
	}
	defer w.release()
	put := w.put
	if put == nil {
		put = w.fetchPush
	}
	if err := put(ctx, desc); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return err
	}
	return nil
}

// successors reports whether dst has desc (skip) and, if not, what desc
// lists, less foreign layers. A manifest is read for it, and kept.
func (w *graphCopy) successors(ctx context.Context, desc ocispec.Descriptor) (succ []ocispec.Descriptor, skip bool, err error) {
	if err := w.acquire(ctx); err != nil {
		return nil, false, err
	}
	ok, err := w.dst.Exists(ctx, desc)
	w.release()
	if err != nil || ok {
		if err != nil {
			return nil, false, &CopyError{Op: "Exists", Digest: desc.Digest, Destination: true, Err: err}
		}
		return nil, true, nil
	}
	if !isManifestType(desc.MediaType) {
		return nil, false, nil
	}
	b, err := w.fetchManifest(ctx, desc)
	if err != nil {
		return nil, false, &CopyError{Op: "Fetch", Digest: desc.Digest, Err: err}
	}
	w.mu.Lock()
	w.manifests[desc.Digest] = b
	w.mu.Unlock()
	if succ, err = successorsIn(w.src)(ctx, w, desc); err != nil {
		return nil, false, &CopyError{Op: "FindSuccessors", Digest: desc.Digest, Err: err}
	}
	return slices.DeleteFunc(succ, isForeignLayer), false, nil
}

// Fetch reads desc from src, or from the manifests read already: w is the
// Fetcher of the successors of a manifest, and of what fetchPush copies.
func (w *graphCopy) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	w.mu.Lock()
	b, ok := w.manifests[desc.Digest]
	w.mu.Unlock()
	if ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return w.src.Fetch(ctx, desc)
}

// fetchPush copies desc from src to dst.
func (w *graphCopy) fetchPush(ctx context.Context, desc ocispec.Descriptor) error {
	rc, err := w.Fetch(ctx, desc)
	if err != nil {
		return &CopyError{Op: "Fetch", Digest: desc.Digest, Err: err}
	}
	defer rc.Close()
	if err := w.dst.Push(ctx, desc, rc); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return &CopyError{Op: "Push", Digest: desc.Digest, Destination: true, Err: err}
	}
	return nil
}

// each calls f for every desc with its index: in turn when w walks on
// the caller's goroutine, else on as many goroutines as transfers may go
// at once (sem), each taking them in turn: a goroutine per desc, most of
// them waiting for sem, cost more than the referrers they copy (3,923 at
// once, a heap of 8 times the layout, for 2,000 referrers of a plugin).
// The first error cancels the calls still going, starts no other, and is
// returned.
func (w *graphCopy) each(ctx context.Context, descs []ocispec.Descriptor, f func(ctx context.Context, i int, d ocispec.Descriptor) error) error {
	if w.sem != nil && len(descs) > 1 {
		return eachAtOnce(ctx, cap(w.sem), descs, f)
	}
	for i, d := range descs {
		if err := f(ctx, i, d); err != nil {
			return err
		}
	}
	return nil
}

// eachAtOnce is each on workers goroutines; apart, so that a walk on
// the caller's goroutine allocates nothing for the goroutines it does
// not start.
func eachAtOnce(ctx context.Context, workers int, descs []ocispec.Descriptor, f func(ctx context.Context, i int, d ocispec.Descriptor) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var failed atomic.Bool
	parallel(len(descs), workers, func(i int) {
		if failed.Load() {
			return
		}
		if err := f(ctx, i, descs[i]); err != nil {
			failed.Store(true)
			cancel(err)
		}
	})
	if !failed.Load() {
		return nil
	}
	return context.Cause(ctx)
}

// acquire takes a place for a transfer, or fails when ctx is done.
func (w *graphCopy) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil || w.sem == nil {
		return err
	}
	select {
	case w.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *graphCopy) release() {
	if w.sem != nil {
		<-w.sem
	}
}

// isForeignLayer reports whether d is a layer oras-go's copy leaves out:
// a non-distributable one (media types deprecated by image-spec 1.1, which
// oras-go still skips), fetched from its URLs by whoever needs it.
func isForeignLayer(d ocispec.Descriptor) bool {
	switch d.MediaType {
	case ocispec.MediaTypeImageLayerNonDistributable,
		ocispec.MediaTypeImageLayerNonDistributableGzip,
		ocispec.MediaTypeImageLayerNonDistributableZstd,
		"application/vnd.docker.image.rootfs.foreign.diff.tar.gzip":
		return true
	}
	return false
}
