package archive

import (
	"bytes"
	"io"
	"io/fs"
	"strings"

	"github.com/plugkit/plugkit/snapshot"
)

// CompressionLevel is the gzip level of every archive Pack writes. It is
// part of the format: changing it changes every digest.
const CompressionLevel = 6

// gzipOSUnknown is the OS byte of the gzip header (RFC 1952: 255,
// "unknown"), so that the bytes do not depend on the packing machine.
const gzipOSUnknown = 255

// The two modes Pack writes.
const (
	modeFile fs.FileMode = 0o644
	modeExec fs.FileMode = 0o755
)

// PackOptions control Pack. The zero value packs the snapshot's paths as
// they are.
type PackOptions struct {
	// Root, when set, puts every entry under ROOT/ (the OCI profile requires
	// the plugin's name). It must be a clean package path (see
	// snapshot.CheckPath).
	Root string
}

// Pack writes the snapshot as a deterministic gzip-compressed USTAR archive
// (see the package documentation for every byte it fixes). The same snapshot
// and options always give the same bytes.
//
// A path that is not clean, that is both a file and a directory, or that
// does not fit the USTAR name and prefix fields is an *EntryError (Index
// -1) wrapping ErrPath, ErrConflict or ErrNameTooLong.
func Pack(s *snapshot.Snapshot, opts PackOptions) ([]byte, error) {
	var b bytes.Buffer
	if err := PackTo(&b, s, opts); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// PackTo is Pack writing the archive to w as it is compressed: memory
// stays at a few 256 KiB chunks besides the snapshot, whatever its size.
// Every path is checked before the first byte is written, so an error
// about the snapshot leaves w untouched; an error of w stops the packing.
func PackTo(w io.Writer, s *snapshot.Snapshot, opts PackOptions) error {
	size := func(p string) int64 { return int64(len(s.Files[p])) }
	return packTo(w, s.Paths(), size, opts, func(tw *TarWriter, name, p string) error {
		return tw.WriteBytes(name, s.Mode(p), s.Files[p])
	})
}

// PackPartialTo is PackTo of a directory read by snapshot.ReadPartial,
// writing the same bytes as PackTo of the whole snapshot: the held files
// come from memory and the deferred ones are streamed from the directory
// (snapshot.Partial.Open) in archive order, one at a time, so memory
// stays at a few chunks whatever the payload. A deferred file that is no
// longer what the reader found stops the packing with an error matching
// snapshot.ErrChanged; w has then been written in part, so write to a
// temporary file and keep it only on success.
func PackPartialTo(w io.Writer, part *snapshot.Partial, opts PackOptions) error {
	size := func(p string) int64 {
		if f, ok := part.Deferred[p]; ok {
			return f.Size
		}
		return int64(len(part.Held.Files[p]))
	}
	return packTo(w, part.Paths(), size, opts, func(tw *TarWriter, name, p string) error {
		f, ok := part.Deferred[p]
		if !ok {
			return tw.WriteBytes(name, part.Mode(p), part.Held.Files[p])
		}
		r, err := part.Open(p)
		if err != nil {
			return err
		}
		defer r.Close()
		return tw.WriteFile(name, part.Mode(p), f.Size, r)
	})
}

// packTo writes the files at the sorted paths, of the given sizes, with
// write, after checking every path and header.
func packTo(w io.Writer, paths []string, size func(p string) int64, opts PackOptions, write func(tw *TarWriter, name, p string) error) error {
	if opts.Root != "" {
		if err := snapshot.CheckPath(opts.Root); err != nil {
			return &EntryError{Index: -1, Path: opts.Root, Err: detail(ErrPath, "root: %v", err)}
		}
	}
	if err := checkPackPaths(paths); err != nil {
		return err
	}
	name := func(p string) string {
		if opts.Root == "" {
			return p
		}
		return opts.Root + "/" + p
	}
	var hdr block
	for _, p := range paths {
		if err := hdr.setFile(name(p), size(p), modeFile); err != nil {
			return &EntryError{Index: -1, Path: p, Err: err}
		}
	}
	gz := newGzipWriter(w)
	tw := NewTarWriter(gz)
	for _, p := range paths {
		if err := write(tw, name(p), p); err != nil {
			gz.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		gz.Close()
		return err
	}
	return gz.Close()
}

var zeroBlock block

// padding is the number of zero bytes that follow n bytes of file data.
func padding(n int64) int64 { return -n & (blockSize - 1) }

// packMode is 0755 for a file with any execute bit, 0644 otherwise.
func packMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return modeExec
	}
	return modeFile
}

// checkPackPaths checks that the sorted paths are clean and that none is
// both a file and the directory of another.
func checkPackPaths(sorted []string) error {
	for i, p := range sorted {
		if err := snapshot.CheckPath(p); err != nil {
			return &EntryError{Index: -1, Path: p, Err: detail(ErrPath, "%v", err)}
		}
		// A child of p sorts after p, once past the paths p + (byte < '/').
		for _, q := range sorted[i+1:] {
			if !strings.HasPrefix(q, p) || q[len(p)] > '/' {
				break
			}
			if q[len(p)] == '/' {
				return &EntryError{Index: -1, Path: p, Err: ErrConflict}
			}
		}
	}
	return nil
}

// setFile fills the block with the header of a regular file.
func (b *block) setFile(name string, size int64, mode fs.FileMode) error {
	*b = block{}
	prefix, base, ok := splitName(name)
	if !ok {
		return ErrNameTooLong
	}
	if !fitsOctal(fSize, size) {
		return detail(ErrSize, "%d bytes do not fit the size field", size)
	}
	copy(b.get(fName), base)
	copy(b.get(fPrefix), prefix)
	b.putOctal(fMode, int64(mode))
	b.putOctal(fUID, 0)
	b.putOctal(fGID, 0)
	b.putOctal(fSize, size)
	b.putOctal(fMtime, 0)
	b[fType.off] = typeReg
	copy(b.get(fMagic), magicUSTAR)
	copy(b.get(fVersion), versionUSTAR)
	b.putOctal(fDevmajor, 0)
	b.putOctal(fDevminor, 0)
	b.putChecksum()
	return nil
}

// splitName splits a path into the USTAR prefix and name fields: the whole
// path in name when it fits, else the longest prefix that fits, cut at a
// '/', leaving a name that fits.
func splitName(p string) (prefix, name string, ok bool) {
	if len(p) <= fName.len {
		return "", p, true
	}
	limit := min(len(p)-1, fPrefix.len)
	i := strings.LastIndexByte(p[:limit+1], '/')
	if i <= 0 || len(p)-i-1 > fName.len {
		return "", "", false
	}
	return p[:i], p[i+1:], true
}
