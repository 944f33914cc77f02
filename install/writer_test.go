package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plugkit/plugkit/source"
)

// TestOneWriterAtATime: while a writer holds the home, another waits up to
// its LockTimeout and then fails with ErrBusy naming the holder; with a
// longer timeout it goes ahead once the first is done.
func TestOneWriterAtATime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	first := openHome(t, home)
	w, err := first.lockWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src := pathSource(kvV1().writeDir(t, filepath.Join(dir, "kv")))
	impatient, _ := Open(home, Options{LockTimeout: 100 * time.Millisecond})
	var n int
	start := time.Now()
	_, err = impatient.Install(ctx, []source.Source{src}, InstallOptions{Consent: yes(&n)})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("gave up after %v, before its timeout", waited)
	}
	noWait, _ := Open(home, Options{LockTimeout: -1})
	if _, err := noWait.Remove(ctx, []string{"kv"}, RemoveOptions{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("writer that does not wait: %v", err)
	}
	// A cancelled wait ends at once.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := first.Sync(cctx, SyncOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled writer: %v", err)
	}

	patient, _ := Open(home, Options{LockTimeout: time.Minute})
	done := make(chan error, 1)
	go func() {
		_, err := patient.Install(ctx, []source.Source{src}, InstallOptions{Consent: yes(&n)})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("second writer did not wait: %v", err)
	default:
	}
	w.close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l, _ := patient.List(); len(l) != 1 {
		t.Fatalf("listed %+v", l)
	}
}

// TestConcurrentInstalls: writers racing on one home all succeed, one
// after the other, and the lock ends with every plugin.
func TestConcurrentInstalls(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		src := pathSource(plugin{name: fmt.Sprintf("p%d", i), version: "1", skills: map[string]string{"s": "x"}}.writeDir(t, filepath.Join(dir, fmt.Sprint(i))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := openHome(t, home)
			var c int
			_, errs[i] = h.Install(ctx, []source.Source{src}, InstallOptions{Consent: yes(&c)})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("install %d: %v", i, err)
		}
	}
	h := openHome(t, home)
	if l, _ := h.List(); len(l) != n {
		t.Fatalf("%d plugins listed, want %d", len(l), n)
	}
	assertClean(t, h)
}

// TestReadersNeverSeeHalfState: while a writer installs, updates and
// removes plugins in a loop, a reader that lists the home and verifies
// each listed plugin always finds it whole, unless a newer lock already
// dropped it.
func TestReadersNeverSeeHalfState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	h := openHome(t, home)
	srcDir := filepath.Join(dir, "kv")
	kvV1().writeDir(t, srcDir)
	mustInstall(t, h, pathSource(srcDir))

	stop := make(chan struct{})
	readerErr := make(chan error, 1)
	var reads, gone int
	r := openHome(t, home)
	go func() {
		defer close(readerErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			list, err := r.List()
			if err != nil {
				readerErr <- err
				return
			}
			reads++
			for i := range list {
				// A plugin removed or replaced meanwhile is ErrGone: the
				// reader lists again. Anything else is a half state.
				err := r.Verify(&list[i])
				if errors.Is(err, ErrGone) {
					gone++
				} else if err != nil {
					readerErr <- fmt.Errorf("%s is listed but not whole: %v", list[i].Name, err)
					return
				}
			}
		}
	}()
	for i := 0; i < 15; i++ {
		p := kvV1()
		p.version = fmt.Sprintf("1.%d", i)
		p.files = map[string]string{"bin/db": "#!/bin/sh\n", fmt.Sprintf("data/%d", i): strings.Repeat("x", 1<<16)}
		p.writeDir(t, srcDir)
		var n int
		if _, err := h.Update(ctx, nil, UpdateOptions{Consent: yes(&n)}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 2 {
			if _, err := h.Remove(ctx, []string{"kv"}, RemoveOptions{}); err != nil {
				t.Fatal(err)
			}
			mustInstall(t, h, pathSource(srcDir))
		}
	}
	close(stop)
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d consistent reads, %d verifications raced with a writer (ErrGone)", reads, gone)
}
