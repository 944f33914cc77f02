package archive

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"sync"

	"github.com/klauspost/compress/gzip"
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
	// NoData, with OnFile, gives each file's data to OnFile only (which
	// may keep it): the snapshot Unpack returns lists every path and mode
	// with nil data. A caller that only writes the files out then holds
	// what it has not written yet rather than the whole payload (plugkit
	// unpack of a 60 MiB plugin: 23,600 page faults with the data kept
	// and the archive read whole, 5,300 streamed without it; tar 312).
	NoData bool
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
		return nil, archiveLimit(lim)
	}
	// bytes.Reader is an io.ByteReader, so gzip reads no further than its
	// member: what is left in it after the member is trailing data.
	return unpack(bytes.NewReader(b), opts, lim)
}

// UnpackFrom is Unpack of the archive r gives, read to its end but never
// held whole: with NoData, what it holds is the file being read. More
// than Limits.MaxArchiveBytes from r is a *LimitError; an error of r is
// returned wrapped.
func UnpackFrom(r io.Reader, opts UnpackOptions) (*snapshot.Snapshot, error) {
	lim := opts.Limits.withDefaults()
	return unpack(bufio.NewReaderSize(&archiveReader{r: r, left: lim.MaxArchiveBytes, lim: lim}, 64<<10), opts, lim)
}

// unpack reads the gzip member at the start of src, then checks that src
// holds only zeros after it.
func unpack(src interface {
	io.Reader
	io.ByteReader
}, opts UnpackOptions, lim Limits) (*snapshot.Snapshot, error) {
	if opts.Root != "" {
		if err := snapshot.CheckPath(opts.Root); err != nil {
			return nil, detail(ErrPath, "root: %v", err)
		}
	}
	zr, err := newGzipReader(src)
	if err != nil {
		return nil, gzipError(err)
	}
	defer gzipReaders.Put(zr)
	in := newAhead(&limitedReader{r: zr, left: lim.MaxUncompressedBytes, limit: lim.MaxUncompressedBytes})
	r := &tarReader{
		in:    in,
		lim:   lim,
		root:  opts.Root,
		gnu:   opts.GNUMagic,
		sink:  opts.OnFile,
		keep:  !opts.NoData || opts.OnFile == nil,
		files: make(map[string][]byte),
		modes: make(map[string]fs.FileMode),
		dirs:  make(map[string]bool),
	}
	err = r.readAll()
	in.Close() // src and zr are this goroutine's again
	if err != nil {
		return nil, err
	}
	// Both readers hand what is left to the writer in place (WriterTo).
	if _, err := io.Copy(zeros{}, src); err != nil {
		if errors.Is(err, errNotZero) {
			return nil, detail(ErrTrailingData, "after the gzip stream")
		}
		return nil, err
	}
	return &snapshot.Snapshot{Files: r.files, Modes: r.modes}, nil
}

// zeros accepts only zero bytes: the end of an archive after its gzip
// member.
type zeros struct{}

var errNotZero = errors.New("not zero")

func (zeros) Write(p []byte) (int, error) {
	if !allZero(p) {
		return 0, errNotZero
	}
	return len(p), nil
}

// archiveLimit is the error of an archive larger than lim allows.
func archiveLimit(lim Limits) error {
	return &LimitError{Limit: "MaxArchiveBytes", Value: lim.MaxArchiveBytes}
}

// archiveReader is UnpackFrom's source: it refuses to read past
// MaxArchiveBytes, and names the errors of reading.
type archiveReader struct {
	r    io.Reader
	left int64
	lim  Limits
}

func (a *archiveReader) Read(p []byte) (int, error) {
	if a.left < 0 {
		return 0, archiveLimit(a.lim)
	}
	// One byte past the limit tells an archive that ends at it from one
	// that goes on.
	n, err := a.r.Read(p[:min(int64(len(p)), a.left+1)])
	a.left -= int64(n)
	switch {
	case a.left < 0:
		return n, archiveLimit(a.lim)
	case err != nil && err != io.EOF:
		return n, &sourceError{err}
	}
	return n, err
}

// sourceError is an error of UnpackFrom's reader, which gzipError passes
// on as it is rather than as a malformed stream.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return "reading the archive: " + e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

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
	var se *sourceError
	switch {
	case errors.As(err, &le), errors.As(err, &se):
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
