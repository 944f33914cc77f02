package snapshot

import (
	"io/fs"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// listBufs are the buffers getdents fills, of the size os.File.ReadDir
// uses: a walk lists one directory at a time, so one buffer serves it.
var listBufs = sync.Pool{New: func() any { return new([8192]byte) }}

// list returns at most n entries of the directory; more only when it
// holds more. It reads the kernel's records itself (getdents64), where
// os.File.ReadDir allocated an entry and its interface for each name.
func (d *dirHandle) list(n int) ([]dirEntry, error) {
	buf := listBufs.Get().(*[8192]byte)
	defer listBufs.Put(buf)
	var all []dirEntry
	for len(all) <= n {
		m, err := unix.Getdents(d.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "getdents", Path: d.name, Err: err}
		}
		if m <= 0 {
			break
		}
		for rec := buf[:m]; len(rec) > 0 && len(all) <= n; {
			// struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen
			// (2), d_type (1), then the name, ended by a NUL.
			reclen := int(*(*uint16)(unsafe.Pointer(&rec[16])))
			if reclen < 20 || reclen > len(rec) {
				return nil, &fs.PathError{Op: "getdents", Path: d.name, Err: unix.EIO}
			}
			name := rec[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			kind := rec[18]
			rec = rec[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			typ, ok, err := d.entryType(string(name), kind)
			if err != nil {
				return nil, err
			}
			if ok {
				all = append(all, dirEntry{string(name), typ})
			}
		}
	}
	return all, nil
}

// entryType turns a d_type into type bits. A filesystem that does not
// record types (DT_UNKNOWN) is asked with fstatat, without following a
// link; ok is false for an entry removed since the listing, which a
// listing made later would not have held either (os.File.ReadDir does
// the same).
func (d *dirHandle) entryType(name string, kind byte) (typ fs.FileMode, ok bool, err error) {
	if kind == unix.DT_UNKNOWN {
		var st unix.Stat_t
		if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				return 0, false, nil
			}
			return 0, false, &fs.PathError{Op: "fstatat", Path: name, Err: err}
		}
		kind = byte((st.Mode & unix.S_IFMT) >> 12) // the d_type of the mode (IFTODT)
	}
	switch kind {
	case unix.DT_REG:
		return 0, true, nil
	case unix.DT_DIR:
		return fs.ModeDir, true, nil
	case unix.DT_LNK:
		return fs.ModeSymlink, true, nil
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true, nil
	case unix.DT_SOCK:
		return fs.ModeSocket, true, nil
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true, nil
	case unix.DT_BLK:
		return fs.ModeDevice, true, nil
	}
	return fs.ModeIrregular, true, nil
}
