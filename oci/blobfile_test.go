package oci

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"testing/iotest"
)

// A layout directory's blob is read whole, as any reader reads it, and
// sized; a link to one is followed; a missing one is fs.ErrNotExist; a
// directory or a named pipe in its place is refused before it is opened,
// and nothing blocks.
func TestDirFilesOpen(t *testing.T) {
	dir := t.TempDir()
	want := make([]byte, 100_000)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(dir, "blob"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	files := dirFiles(dir)
	f, err := files.open("blob")
	if err != nil {
		t.Fatal(err)
	}
	if err := iotest.TestReader(f, want); err != nil {
		t.Error(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := f.Close(); err == nil {
		t.Error("a second close did not fail")
	}
	if size, err := files.size("blob"); err != nil || size != int64(len(want)) {
		t.Errorf("size: %d, %v; want %d", size, err, len(want))
	}
	if _, err := files.open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing blob: %v, want fs.ErrNotExist", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := files.open("sub"); err == nil {
		t.Error("a directory was opened as a blob")
	}
	if runtime.GOOS == "windows" {
		return
	}
	// A symbolic link is followed, as os.Stat and os.Open follow it.
	if err := os.Symlink("blob", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if size, err := files.size("link"); err != nil || size != int64(len(want)) {
		t.Errorf("size through a link: %d, %v; want %d", size, err, len(want))
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := files.open("fifo"); err == nil {
		t.Error("a named pipe was opened as a blob")
	}
}

// A blob file read past its end keeps saying io.EOF, and its read errors
// name the file.
func TestBlobFileEOFAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "empty")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := openBlob(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 2 {
		if n, err := f.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Fatalf("read of an empty blob: %d, %v", n, err)
		}
	}
	d, err := openBlob(dir, 0) // a directory opens, and refuses to be read
	if err != nil {
		t.Skipf("directory not openable here: %v", err)
	}
	defer d.Close()
	var pe *fs.PathError
	if _, err := d.Read(make([]byte, 8)); !errors.As(err, &pe) || pe.Path != dir {
		t.Errorf("read of a directory: %v, want a *fs.PathError naming %s", err, dir)
	}
}

// A blob file read to the size it was given, by a read that came back
// short, says io.EOF next (without asking the kernel: the bytes written to
// it since do not show, as if it had been read before); one that grew
// before it was read gives all it holds, so that its readers see more than
// its descriptor's size; one that shrank ends where it ends.
func TestBlobFileEndsWhereSized(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("openBlob is os.Open here")
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	readAll := func(f io.Reader) []byte {
		t.Helper()
		var got []byte
		buf := make([]byte, 64)
		for {
			n, err := f.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				return got
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	ten := []byte("0123456789")

	path := write("sized", ten)
	f, err := openBlob(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := f.Read(make([]byte, 64)); n != 10 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	a, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("more"))
	a.Close()
	for range 2 {
		if n, err := f.Read(make([]byte, 64)); n != 0 || err != io.EOF {
			t.Fatalf("read at the size given: %d, %v, want io.EOF", n, err)
		}
	}

	grown, err := openBlob(write("grown", append(ten, "more"...)), 10)
	if err != nil {
		t.Fatal(err)
	}
	defer grown.Close()
	if got := readAll(grown); string(got) != "0123456789more" {
		t.Errorf("a file that grew before it was read gave %q", got)
	}

	shrunk, err := openBlob(write("shrunk", ten[:4]), 10)
	if err != nil {
		t.Fatal(err)
	}
	defer shrunk.Close()
	if got := readAll(shrunk); string(got) != "0123" {
		t.Errorf("a file that shrank before it was read gave %q", got)
	}

	// Read in pieces smaller than the file, it ends where it ends.
	pieces, err := openBlob(write("pieces", ten), 10)
	if err != nil {
		t.Fatal(err)
	}
	defer pieces.Close()
	if err := iotest.TestReader(pieces, ten); err != nil {
		t.Error(err)
	}
}
