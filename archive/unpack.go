package archive

import (
	"bytes"
	"errors"
	"github.com/klauspost/compress/gzip"
	"io"
	"io/fs"
	"sync"

	"github.com/plugkit/plugkit/snapshot"
)

// UnpackOptions control Unpack. The zero value unpacks with default limits
// and no root folder.
type UnpackOptions struct {
	Limits Limits
	// Root, when set, is a folder every entry must lie in (the OCI profile
	// requires the plugin's name); it is stripped from the paths. An entry
	// outside it is an error wrapping ErrOutsideRoot. It must be a clean
	// package path (see snapshot.CheckPath).
	Root string
	// GNUMagic also accepts headers with GNU tar's magic ("ustar  \x00"),
	// which Colossus writes into its OCI layers. It is meant for the OCI
	// layer reader only; every other reader stays strict USTAR. Such a
	// header must be a regular file (type '0') or a directory (type '5'),
	// with bytes 345 to 500 (USTAR's prefix, GNU's times and sparse map) all
	// NUL and octal numeric fields, so that every tar reader sees the same
	// name and size; links, special files and extension records are refused
	// as in USTAR.
	GNUMagic bool
	// OnFile, when set, is given each file as soon as the archive has
	// delivered it and its header and padding passed every check, in
	// archive order, while the rest of the archive is still being read:
	// a caller can write it out meanwhile. Its path is relative to Root,
	// and data is the slice the snapshot holds, which it must not change.
	// Later entries may still refuse the archive (a duplicate, a conflict,
	// a limit, trailing data), so what OnFile did must be undone when Unpack
	// fails. An error from OnFile stops Unpack, which returns it as it is.
	OnFile func(path string, mode fs.FileMode, data []byte) error
}

// Unpack reads a gzip-compressed USTAR archive entirely in memory and
// returns its files and their permission bits as a snapshot. It never
// touches the filesystem.
//
// Anything but regular files and directories, any malformed or ambiguous
// header, and any data after the archive is refused with an error wrapping
// one of the package's sentinel errors; a header's error is an *EntryError
// naming it. A limit crossed is a *LimitError (matching ErrLimit).
func Unpack(b []byte, opts UnpackOptions) (*snapshot.Snapshot, error) {
	lim := opts.Limits.withDefaults()
	if int64(len(b)) > lim.MaxArchiveBytes {
		return nil, &LimitError{Limit: "MaxArchiveBytes", Value: lim.MaxArchiveBytes}
	}
	if opts.Root != "" {
		if err := snapshot.CheckPath(opts.Root); err != nil {
			return nil, detail(ErrPath, "root: %v", err)
		}
	}
	// bytes.Reader is an io.ByteReader, so gzip reads no further than its
	// member: what is left in src after it is trailing data.
	src := bytes.NewReader(b)
	zr, err := newGzipReader(src)
	if err != nil {
		return nil, gzipError(err)
	}
	defer gzipReaders.Put(zr)
	r := &tarReader{
		in:    &limitedReader{r: zr, left: lim.MaxUncompressedBytes, limit: lim.MaxUncompressedBytes},
		lim:   lim,
		root:  opts.Root,
		gnu:   opts.GNUMagic,
		sink:  opts.OnFile,
		files: make(map[string][]byte),
		modes: make(map[string]fs.FileMode),
		dirs:  make(map[string]bool),
	}
	if err := r.readAll(); err != nil {
		return nil, err
	}
	if !allZero(b[len(b)-src.Len():]) {
		return nil, detail(ErrTrailingData, "after the gzip stream")
	}
	return &snapshot.Snapshot{Files: r.files, Modes: r.modes}, nil
}

// gzipReaders keeps gzip readers for reuse: each holds a decompressor of
// some 40 KB, which unpacking many small archives (an export of a hundred
// plugins) would otherwise allocate every time.
var gzipReaders sync.Pool

// newGzipReader returns a gzip reader of the single gzip member at the
// start of src, from the pool when one is there.
func newGzipReader(src io.Reader) (*gzip.Reader, error) {
	zr, ok := gzipReaders.Get().(*gzip.Reader)
	var err error
	if ok {
		err = zr.Reset(src)
	} else {
		zr, err = gzip.NewReader(src)
	}
	if err != nil {
		if zr != nil {
			gzipReaders.Put(zr)
		}
		return nil, err
	}
	zr.Multistream(false)
	return zr, nil
}

// gzipError maps an error of the gzip layer onto the package's errors.
func gzipError(err error) error {
	var le *LimitError
	switch {
	case errors.As(err, &le):
		return err
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return detail(ErrTruncated, "gzip stream ends early")
	default:
		return detail(ErrGzip, "%v", err)
	}
}

// limitedReader stops the decompressed stream at a limit with a
// *LimitError, however much the gzip stream would inflate to.
type limitedReader struct {
	r     io.Reader
	left  int64
	limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more tells a stream that ends exactly at the limit
		// from one that goes on.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, &LimitError{Limit: "MaxUncompressedBytes", Value: l.limit}
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
