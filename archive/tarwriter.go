package archive

import (
	"io"
	"io/fs"
)

// TarWriter writes an uncompressed USTAR stream with the headers Pack
// writes: regular files only, uid and gid 0, empty owner names, mtime 0, in
// the order given (sort the names first for a deterministic stream). Pack
// streams its archives through one; OCI layout tars (package oci's Export)
// are written with it.
type TarWriter struct {
	w   io.Writer
	hdr block
	buf []byte  // WriteFile's copy buffer, when w is no io.ReaderFrom
	one [1]byte // where WriteFile looks for a byte past the size
}

// NewTarWriter starts a tar stream on w.
func NewTarWriter(w io.Writer) *TarWriter { return &TarWriter{w: w} }

// header writes the header of a regular file: mode 0755 when mode has any
// execute bit, else 0644. A name that does not fit the USTAR fields is an
// *EntryError wrapping ErrNameTooLong.
func (t *TarWriter) header(name string, mode fs.FileMode, size int64) error {
	if err := t.hdr.setFile(name, size, packMode(mode)); err != nil {
		return &EntryError{Index: -1, Path: name, Err: err}
	}
	_, err := t.w.Write(t.hdr[:])
	return err
}

// WriteBytes writes a regular file holding data.
func (t *TarWriter) WriteBytes(name string, mode fs.FileMode, data []byte) error {
	if err := t.header(name, mode, int64(len(data))); err != nil {
		return err
	}
	if _, err := t.w.Write(data); err != nil {
		return err
	}
	_, err := t.w.Write(zeroBlock[:padding(int64(len(data)))])
	return err
}

// WriteFile writes a regular file of size bytes read from r. r yielding
// fewer or more bytes than size is an *EntryError wrapping ErrSize.
func (t *TarWriter) WriteFile(name string, mode fs.FileMode, size int64, r io.Reader) error {
	if err := t.header(name, mode, size); err != nil {
		return err
	}
	// A writer that reads for itself (io.ReaderFrom: a file, export's
	// ahead-writer) is given no buffer: io.CopyBuffer would not use it.
	if _, ok := t.w.(io.ReaderFrom); !ok && t.buf == nil {
		t.buf = make([]byte, 256<<10)
	}
	n, err := io.CopyBuffer(t.w, io.LimitReader(r, size), t.buf)
	if err != nil {
		return err
	}
	if n != size {
		return &EntryError{Index: -1, Path: name, Err: detail(ErrSize, "%d bytes of %d", n, size)}
	}
	// The reader's own error here counts: one that checks its size says
	// so when it finds more.
	if extra, err := r.Read(t.one[:]); extra != 0 {
		return &EntryError{Index: -1, Path: name, Err: detail(ErrSize, "more than %d bytes", size)}
	} else if err != nil && err != io.EOF {
		return err
	}
	_, err = t.w.Write(zeroBlock[:padding(size)])
	return err
}

// Close writes the two zero blocks that end the archive. It does not close
// the underlying writer.
func (t *TarWriter) Close() error {
	if _, err := t.w.Write(zeroBlock[:]); err != nil {
		return err
	}
	_, err := t.w.Write(zeroBlock[:])
	return err
}
