package archive

import (
	"fmt"
	"io"
	"io/fs"
)

// TarWriter writes an uncompressed USTAR stream with the headers Pack
// writes: regular files only, uid and gid 0, empty owner names, mtime 0, in
// the order given (sort the names first for a deterministic stream). OCI
// layout tars (package oci's Export) are written with it.
type TarWriter struct {
	w   io.Writer
	hdr block
}

// NewTarWriter starts a tar stream on w.
func NewTarWriter(w io.Writer) *TarWriter { return &TarWriter{w: w} }

// WriteFile writes the header of a regular file of size bytes with mode
// (0755 when it has any execute bit, else 0644), then exactly size bytes
// from r and the padding. A name that does not fit the USTAR fields is an
// *EntryError wrapping ErrNameTooLong; r yielding fewer or more bytes than
// size is an error wrapping ErrSize.
func (t *TarWriter) WriteFile(name string, mode fs.FileMode, size int64, r io.Reader) error {
	if err := t.hdr.setFile(name, size, packMode(mode)); err != nil {
		return &EntryError{Index: -1, Path: name, Err: err}
	}
	if _, err := t.w.Write(t.hdr[:]); err != nil {
		return err
	}
	n, err := io.Copy(t.w, io.LimitReader(r, size))
	if err != nil {
		return err
	}
	if n != size {
		return &EntryError{Index: -1, Path: name, Err: detail(ErrSize, "%d bytes of %d", n, size)}
	}
	if extra, _ := r.Read(t.hdr[:1]); extra != 0 {
		return &EntryError{Index: -1, Path: name, Err: detail(ErrSize, "more than %d bytes", size)}
	}
	_, err = t.w.Write(zeroBlock[:padding(size)])
	return err
}

// Close writes the two zero blocks that end the archive. It does not close
// the underlying writer.
func (t *TarWriter) Close() error {
	if _, err := t.w.Write(zeroBlock[:]); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	_, err := t.w.Write(zeroBlock[:])
	return err
}
