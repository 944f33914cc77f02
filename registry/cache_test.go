package registry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// constant returns a read that answers v and counts its calls in n.
func constant(v int, n *atomic.Int32) func(context.Context) (int, error) {
	return func(context.Context) (int, error) { n.Add(1); return v, nil }
}

// TestMemoGenerations: an answer read before a reset is not cached after
// it, and a bypassed cache keeps nothing.
func TestMemoGenerations(t *testing.T) {
	ctx := context.Background()
	c := newMemo[string, int](time.Hour)
	// A write lands while the miss is answered from the store.
	v, how, err := c.load(ctx, "k", func(context.Context) (int, error) { c.reset(); return 1, nil })
	if v != 1 || how != lookupMiss || err != nil {
		t.Fatalf("first load: %v %v %v", v, how, err)
	}
	if _, ok := c.get("k"); ok {
		t.Fatal("an answer read before a reset was cached")
	}
	var n atomic.Int32
	c.load(ctx, "k", constant(2, &n))
	if v, how, _ := c.load(ctx, "k", constant(9, &n)); v != 2 || how != lookupHit || n.Load() != 1 {
		t.Fatalf("load after load: %v %v, %d reads", v, how, n.Load())
	}
	c.bypass(true)
	if v, how, _ := c.load(ctx, "k", constant(3, &n)); v != 3 || how != lookupBypass {
		t.Fatalf("a bypassed cache: %v %v", v, how)
	}
	c.bypass(false)
	if _, ok := c.get("k"); ok {
		t.Fatal("a bypassed cache kept an answer")
	}
	off := newMemo[string, int](0)
	off.load(ctx, "k", constant(4, &n))
	if v, how, _ := off.load(ctx, "k", constant(5, &n)); v != 5 || how != lookupMiss {
		t.Fatalf("a disabled cache: %v %v", v, how)
	}
}

// gate is a read that blocks until released, counting its calls.
type gate struct {
	calls   atomic.Int32
	started chan struct{} // receives once per call
	release chan struct{}
}

func newGate() *gate { return &gate{started: make(chan struct{}, 100), release: make(chan struct{})} }

func (g *gate) read(v int, err error) func(context.Context) (int, error) {
	return func(context.Context) (int, error) {
		g.calls.Add(1)
		g.started <- struct{}{}
		<-g.release
		return v, err
	}
}

// TestMemoSharesReads: calls that miss a key together share one read of
// the store and all get its answer; the answer is kept.
func TestMemoSharesReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newMemo[string, int](time.Hour)
		g := newGate()
		const callers = 16
		var wg sync.WaitGroup
		got := make([]int, callers)
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, how, err := c.load(context.Background(), "k", g.read(7, nil))
				if err != nil || how != lookupMiss {
					t.Errorf("caller %d: %v %v", i, how, err)
				}
				got[i] = v
			}()
		}
		<-g.started
		synctest.Wait() // the other calls wait for the read
		close(g.release)
		wg.Wait()
		if n := g.calls.Load(); n != 1 {
			t.Fatalf("%d callers missing together read the store %d times, want once", callers, n)
		}
		for i, v := range got {
			if v != 7 {
				t.Fatalf("caller %d got %d", i, v)
			}
		}
		if v, ok := c.get("k"); !ok || v != 7 {
			t.Fatalf("the shared answer was not kept: %v %v", v, ok)
		}
	})
}

// TestMemoNoSharingAcrossResets: a call that arrives after a reset does
// not wait for a read begun before it (which may have missed the write),
// and the old read's answer is not kept.
func TestMemoNoSharingAcrossResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newMemo[string, int](time.Hour)
		old := newGate()
		done := make(chan int)
		go func() {
			v, _, _ := c.load(context.Background(), "k", old.read(1, nil))
			done <- v
		}()
		<-old.started
		c.reset() // a write commits while the old read runs
		var n atomic.Int32
		if v, _, _ := c.load(context.Background(), "k", constant(2, &n)); v != 2 || n.Load() != 1 {
			t.Fatalf("a call after the reset got %d with %d reads of its own", v, n.Load())
		}
		close(old.release)
		if v := <-done; v != 1 {
			t.Fatalf("the old read's caller got %d", v)
		}
		if v, _ := c.get("k"); v != 2 {
			t.Fatalf("cached %d, want the answer read after the reset", v)
		}
	})
}

// TestMemoBypassReadsAlone: while the change feed is down no reset tells
// the cache of a write, so calls do not share reads.
func TestMemoBypassReadsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newMemo[string, int](time.Hour)
		c.bypass(true)
		g := newGate()
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, how, _ := c.load(context.Background(), "k", g.read(1, nil)); how != lookupBypass {
					t.Errorf("lookup %v while bypassed", how)
				}
			}()
		}
		for range 3 {
			<-g.started // three reads run at once
		}
		close(g.release)
		wg.Wait()
	})
}

// TestMemoSharedErrors: a store error reaches every waiter and is not
// kept; when the reader's client left (its context ended), a waiter whose
// client is still there reads alone; a waiter whose own context ends stops
// waiting.
func TestMemoSharedErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newMemo[string, int](time.Hour)
		failing := errors.New("store down")
		g := newGate()
		errs := make(chan error, 2)
		for range 2 {
			go func() { _, _, err := c.load(context.Background(), "k", g.read(0, failing)); errs <- err }()
		}
		<-g.started
		synctest.Wait() // the other calls wait for the read
		close(g.release)
		for range 2 {
			if err := <-errs; !errors.Is(err, failing) {
				t.Fatalf("waiter got %v, want the store's error", err)
			}
		}
		if g.calls.Load() != 1 {
			t.Fatalf("%d reads", g.calls.Load())
		}
		if _, ok := c.get("k"); ok {
			t.Fatal("an error was cached")
		}

		// The reader's client leaves.
		g = newGate()
		go c.load(context.Background(), "k", g.read(0, context.Canceled))
		<-g.started
		var n atomic.Int32
		res := make(chan int)
		go func() { v, _, _ := c.load(context.Background(), "k", constant(5, &n)); res <- v }()
		synctest.Wait() // the other calls wait for the read
		close(g.release)
		if v := <-res; v != 5 || n.Load() != 1 {
			t.Fatalf("after the reader's client left, the waiter got %d with %d reads of its own", v, n.Load())
		}

		// A waiter's own client leaves.
		g = newGate()
		go c.load(context.Background(), "j", g.read(0, nil))
		<-g.started
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _, _, err := c.load(ctx, "j", constant(6, &n)); errs <- err }()
		synctest.Wait() // the other calls wait for the read
		cancel()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("a waiter whose context ended: %v", err)
		}
		close(g.release)
	})
}

// TestMemoReadPanics: a read that panics releases its waiters with an
// error instead of leaving them waiting for ever.
func TestMemoReadPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newMemo[string, int](time.Hour)
		g := newGate()
		go func() {
			defer func() { recover() }()
			c.load(context.Background(), "k", func(context.Context) (int, error) {
				g.started <- struct{}{}
				<-g.release
				panic("read panics")
			})
		}()
		<-g.started
		errs := make(chan error)
		var n atomic.Int32
		go func() { _, _, err := c.load(context.Background(), "k", constant(1, &n)); errs <- err }()
		synctest.Wait() // the other calls wait for the read
		close(g.release)
		select {
		case err := <-errs:
			if !errors.Is(err, errReadPanicked) {
				t.Fatalf("waiter got %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the waiter of a panicked read still waits")
		}
	})
}
