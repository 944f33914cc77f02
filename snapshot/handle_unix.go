//go:build unix

package snapshot

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory below the plugin root. On Unix it is a
// file descriptor, and everything below it is opened with openat and
// O_NOFOLLOW one component at a time: no path is ever resolved by the
// kernel through a link, so nothing outside the root can be reached, and a
// file costs four system calls (openat, fstat, read, close).
//
// The descriptor is held bare, not in an os.File: a walk opens one per
// directory, and an os.File cost each an fcntl, a cleanup registered and
// removed, and the poller's bookkeeping on close. Whoever opens one closes
// it (see sharedDir).
type dirHandle struct {
	fd   int
	name string // for errors
}

func openRootHandle(real string) (*dirHandle, error) {
	fd, err := unix.Open(real, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: real, Err: err}
	}
	return &dirHandle{fd, real}, nil
}

func (d *dirHandle) close() { unix.Close(d.fd) }

// openAt opens the link-free path rel (one or more components) below d.
func (d *dirHandle) openAt(rel string, flags int) (int, error) {
	fd := d.fd
	own := false
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		fl := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | flags
		if i < len(parts)-1 {
			fl = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, part, fl, 0)
		if own {
			unix.Close(fd)
		}
		if err != nil {
			return -1, &fs.PathError{Op: "openat", Path: rel, Err: err}
		}
		fd, own = next, true
	}
	return fd, nil
}

func (d *dirHandle) openDir(rel string) (*dirHandle, error) {
	fd, err := d.openAt(rel, unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return &dirHandle{fd, rel}, nil
}

// openRegular opens the regular file rel below d, returning its
// descriptor and size; errNotRegular for anything else, and errTooLarge
// past max bytes. O_NONBLOCK keeps a fifo swapped in since the listing
// from blocking the open.
func (d *dirHandle) openRegular(rel string, max int64) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := d.openAt(rel, unix.O_NONBLOCK)
	if err != nil {
		return -1, st, err
	}
	err = unix.Fstat(fd, &st)
	switch {
	case err != nil:
		err = &fs.PathError{Op: "fstat", Path: rel, Err: err}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = errNotRegular
	case st.Size > max:
		err = errTooLarge
	default:
		return fd, st, nil
	}
	unix.Close(fd)
	return -1, st, err
}

// statFile returns the size and permission bits of the regular file rel
// below d, as readFile would judge it, without reading it.
func (d *dirHandle) statFile(rel string, max int64) (int64, fs.FileMode, error) {
	fd, st, err := d.openRegular(rel, max)
	if err != nil {
		return 0, 0, err
	}
	unix.Close(fd)
	return st.Size, fs.FileMode(st.Mode & 0o777), nil
}

// openStream opens the regular file rel below d for reading, as readFile
// would judge it, and returns its size.
func (d *dirHandle) openStream(rel string, max int64) (io.ReadCloser, int64, error) {
	fd, st, err := d.openRegular(rel, max)
	if err != nil {
		return nil, 0, err
	}
	return fdReader(fd), st.Size, nil
}

// fdReader reads a file descriptor with plain read calls: os.NewFile
// would first try (and, for a regular file, fail) to add it to the poller.
type fdReader int

func (f fdReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(f), b)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f fdReader) Close() error { return unix.Close(int(f)) }

// replaced reports whether err, from opening a path that opened before,
// says that a link or a non-directory now stands on it: O_NOFOLLOW meets
// a link with ELOOP (EMLINK on FreeBSD), and a component that is no
// longer a directory gives ENOTDIR.
func replaced(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) || errors.Is(err, unix.ENOTDIR)
}

// readFile reads the regular file rel below d into memory from mem. It
// returns errNotRegular for anything else, and errTooLarge past max bytes.
func (d *dirHandle) readFile(rel string, max int64, mem *chunk) ([]byte, fs.FileMode, error) {
	fd, st, err := d.openRegular(rel, max)
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(fd)
	// One byte more than fstat reported: a short read is the end of a
	// regular file, so the usual case costs a single read; a file that grew
	// meanwhile keeps being read, and held to max.
	b := mem.buffer(st.Size + 1)
	n := 0
	for {
		m, err := unix.Read(fd, b[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, 0, &fs.PathError{Op: "read", Path: rel, Err: err}
		}
		n += m
		if int64(n) > max {
			return nil, 0, errTooLarge
		}
		if m == 0 || n < len(b) {
			break
		}
		b = append(b, make([]byte, len(b))...)
	}
	return mem.keep(b[:n]), fs.FileMode(st.Mode & 0o777), nil
}

// mkdir makes the directory name inside d with mode 0755 whatever the
// umask (the process's, as the caller read it), unless it exists, and
// opens it (never through a link). One that exists was made so by
// whoever made it.
func (d *dirHandle) mkdir(name string, umask fs.FileMode) (*dirHandle, error) {
	err := unix.Mkdirat(d.fd, name, 0o755)
	if err != nil && err != unix.EEXIST {
		return nil, &fs.PathError{Op: "mkdirat", Path: name, Err: err}
	}
	made := err == nil
	sub, err := d.openDir(name)
	if err == nil && made && umask&0o755 != 0 {
		if err = unix.Fchmod(sub.fd, 0o755); err != nil {
			sub.close()
			return nil, &fs.PathError{Op: "fchmod", Path: name, Err: err}
		}
	}
	return sub, err
}

// create writes a new file name inside d with exactly mode, whatever the
// umask: the mode is set again after creation only when umask (the
// process's, as the caller read it) would have narrowed it. It never
// replaces or follows anything already there.
func (d *dirHandle) create(name string, data []byte, mode, umask fs.FileMode) error {
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	for len(data) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, data)
		data = data[max(n, 0):]
		if err == unix.EINTR {
			err = nil
		}
	}
	if err == nil && mode.Perm()&umask != 0 {
		err = unix.Fchmod(fd, uint32(mode.Perm()))
	}
	if err == nil && syncEachFile {
		err = unix.Fsync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

// syncDir flushes the directory's own entries, where each directory is
// flushed on its own (see syncEachFile).
func (d *dirHandle) syncDir() error {
	if !syncEachFile {
		return nil
	}
	return fsync(d.fd, d.name)
}

func fsync(fd int, name string) error {
	if err := unix.Fsync(fd); err != nil {
		return &fs.PathError{Op: "fsync", Path: name, Err: err}
	}
	return nil
}

// syncDir flushes the entries of the directory at path: after a rename,
// so that the rename survives a crash.
func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return fsync(int(f.Fd()), path)
}
