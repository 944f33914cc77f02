//go:build unix

package oci

import (
	"fmt"
	"io"
	"io/fs"
	"syscall"
)

// openBlob opens the regular file at path, of size bytes when it was
// sized, for reading as a bare file descriptor. An *os.File costs each
// blob an epoll_ctl call that a regular file refuses (os.Open registers
// every file with the poller), an allocation with a cleanup, and the
// poller's locking on each read; a blob is opened, read once to its end
// and closed, and needs none of it. O_NONBLOCK keeps a named pipe put in
// place of the file after its check from blocking the open.
func openBlob(path string, size int64) (io.ReadCloser, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return &blobFile{fd: fd, path: path, left: size}, nil
	}
}

// blobFile reads an open blob file; Close must be called once.
type blobFile struct {
	fd   int
	path string
	// left is how many bytes of the size the file was given remain
	// unread; end is set by a read that came back short at or past that
	// size: the end of a regular file, which the next Read reports
	// without asking the kernel again. Every reader of a blob reads one
	// byte more than its descriptor's size to find the end; this spares
	// that read its system call (one in five of an export's, 500 for 100
	// plugins). A file that grew after it was sized then ends where it
	// was sized, as if it had been read before it grew: its readers
	// check what they read against its digest all the same.
	left int64
	end  bool
}

func (f *blobFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if f.end {
		return 0, io.EOF
	}
	for {
		n, err := syscall.Read(f.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
		case n == 0:
			f.end = true
			return 0, io.EOF
		}
		f.left -= int64(n)
		f.end = n < len(p) && f.left <= 0
		return n, nil
	}
}

func (f *blobFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.path, Err: fs.ErrClosed}
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}

// regularSize is the size of the regular file at path (followed if a
// symbolic link), named name in errors; anything else is refused. The
// stat goes into a variable of its own, where os.Stat allocates a
// FileInfo for each of an export's blobs.
func regularSize(path, name string) (int64, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Stat(path, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		break
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return 0, fmt.Errorf("%s: not a regular file", name)
	}
	return st.Size, nil
}
