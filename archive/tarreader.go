package archive

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/plugkit/plugkit/snapshot"
)

// tarReader reads a USTAR stream into files and modes, checking every
// header and every limit as it goes.
type tarReader struct {
	in    io.Reader
	lim   Limits
	root  string
	gnu   bool                                    // accept GNU magic (UnpackOptions.GNUMagic)
	sink  func(string, fs.FileMode, []byte) error // UnpackOptions.OnFile
	keep  bool                                    // keep the data in files (not UnpackOptions.NoData)
	files map[string][]byte
	modes map[string]fs.FileMode
	dirs  map[string]bool // every directory seen, explicit or implied; true when explicit
	total int64           // file bytes so far
	index int             // headers read so far
	hdr   block
}

// readAll reads headers and data up to the end-of-archive blocks, then
// checks that nothing but zeros follows to the end of the stream.
func (r *tarReader) readAll() error {
	for {
		if err := r.readBlock(&r.hdr); err != nil {
			return err
		}
		if r.hdr.isZero() {
			return r.readEnd()
		}
		if r.index >= r.lim.MaxEntries {
			return &LimitError{Limit: "MaxEntries", Value: int64(r.lim.MaxEntries)}
		}
		if err := r.entry(); err != nil {
			return err
		}
		r.index++
	}
}

// readBlock reads one whole block; the stream ending first is truncation.
func (r *tarReader) readBlock(b *block) error {
	_, err := io.ReadFull(r.in, b[:])
	return streamError(err)
}

// streamError maps a read error of the decompressed stream.
func streamError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return detail(ErrTruncated, "the archive ends before its end-of-archive blocks")
	}
	if err != nil {
		return gzipError(err)
	}
	return nil
}

// readEnd reads the second end-of-archive block and checks that only zeros
// follow it (writers may pad to a record size).
func (r *tarReader) readEnd() error {
	if err := r.readBlock(&r.hdr); err != nil {
		return err
	}
	if !r.hdr.isZero() {
		return detail(ErrTrailingData, "a lone zero block is followed by data")
	}
	// The header block, read already, is the buffer: the padding after
	// the end is a few blocks, not worth an allocation per archive.
	buf := r.hdr[:]
	for {
		n, err := r.in.Read(buf)
		if !allZero(buf[:n]) {
			return detail(ErrTrailingData, "after the end-of-archive blocks")
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return gzipError(err)
		}
	}
}

// entry handles the header in r.hdr and, for a file, its data.
func (r *tarReader) entry() error {
	h := &r.hdr
	name, err := h.name()
	fail := func(err error) error {
		if _, ok := err.(*LimitError); ok {
			return err // it names the entry already
		}
		return &EntryError{Index: r.index, Path: name, Err: err}
	}
	if err != nil {
		return fail(err)
	}
	if err := h.check(r.gnu); err != nil {
		return fail(err)
	}
	mode, okMode := parseOctal(h.get(fMode))
	size, okSize := parseOctal(h.get(fSize))
	if !okMode || !okSize {
		return fail(detail(ErrHeader, "mode or size is not an octal number"))
	}
	isDir := h[fType.off] == typeDir
	if isDir {
		if size != 0 {
			return fail(detail(ErrSize, "a directory with %d bytes of data", size))
		}
		name = strings.TrimSuffix(name, "/")
	}
	rel, err := r.place(name, isDir)
	if err != nil {
		return fail(err)
	}
	if rel == "" { // the root folder itself
		return nil
	}
	if isDir {
		if err := r.addDir(rel); err != nil {
			return fail(err)
		}
		return nil
	}
	perm := fs.FileMode(mode) & fs.ModePerm
	data, err := r.addFile(rel, name, size, perm)
	if err != nil {
		return fail(err)
	}
	if r.sink != nil {
		return r.sink(rel, perm, data)
	}
	return nil
}

// name reads the full path of the header: prefix "/" name.
func (h *block) name() (string, error) {
	base, ok1 := cString(h.get(fName))
	prefix, ok2 := cString(h.get(fPrefix))
	full := base
	if prefix != "" {
		full = prefix + "/" + base
	}
	if !ok1 || !ok2 {
		return full, detail(ErrPath, "NUL inside the name")
	}
	return full, nil
}

// check verifies the checksum, the magic and the type flag, and that the
// numeric fields it does not use are well formed. With gnu, a header with
// GNU magic passes when it holds nothing a USTAR reader would read
// differently (see UnpackOptions.GNUMagic).
func (h *block) check(gnu bool) error {
	want, ok := parseOctal(h.get(fChksum))
	if !ok {
		return detail(ErrChecksum, "not an octal number")
	}
	if unsigned, signed := h.sums(); want != unsigned {
		if want == signed {
			return detail(ErrChecksum, "computed over signed bytes")
		}
		return detail(ErrChecksum, "header says %d, header sums to %d", want, unsigned)
	}
	magic, version := string(h.get(fMagic)), string(h.get(fVersion))
	switch {
	case magic == magicUSTAR && version == versionUSTAR:
	case magic == magicGNU && version == versionGNU && gnu:
		if t := h[fType.off]; t != typeReg && t != typeDir {
			if err := typeError(t); err != nil {
				return err
			}
			return detail(ErrGNU, "type %q with GNU magic: only '0' and '5' are accepted", t)
		}
		if !allZero(h[fPrefix.off : fPrefix.off+fPrefix.len+1]) {
			return detail(ErrGNU, "GNU header with data in bytes 345-500 (times, sparse map or prefix)")
		}
	case magic == magicGNU:
		return detail(ErrMagic, "GNU tar format")
	default:
		return detail(ErrMagic, "magic %q version %q", magic, version)
	}
	if err := typeError(h[fType.off]); err != nil {
		return err
	}
	for _, f := range []field{fUID, fGID, fMtime} {
		if _, ok := parseOctal(h.get(f)); !ok {
			return detail(ErrHeader, "uid, gid or mtime is not an octal number")
		}
	}
	return nil
}

// typeError is nil for a regular file or a directory, and otherwise says
// why the type flag is refused.
func typeError(t byte) error {
	switch t {
	case typeReg, typeRegOld, typeDir:
		return nil
	case typeSymlink:
		return ErrSymlink
	case typeLink:
		return ErrHardLink
	case typeChar, typeBlock, typeFifo:
		return fmt.Errorf("%w (type %q)", ErrSpecial, t)
	case 'x', 'g':
		return fmt.Errorf("%w (type %q)", ErrPAX, t)
	case 'D', 'K', 'L', 'M', 'N', 'S', 'V':
		return fmt.Errorf("%w (type %q)", ErrGNU, t)
	default:
		return fmt.Errorf("%w (type %q)", ErrType, t)
	}
}

// place checks a full entry path and returns it relative to the root
// folder: "" for the root folder itself.
func (r *tarReader) place(name string, isDir bool) (string, error) {
	if len(name) >= 2 && name[1] == ':' && isASCIILetter(name[0]) {
		return "", detail(ErrPath, "Windows drive prefix")
	}
	if err := snapshot.CheckPath(name); err != nil {
		return "", detail(ErrPath, "%v", err)
	}
	rel := name
	if r.root != "" {
		if name == r.root && isDir {
			return "", nil
		}
		var ok bool
		if rel, ok = strings.CutPrefix(name, r.root+"/"); !ok {
			return "", detail(ErrOutsideRoot, "not under %q", r.root+"/")
		}
	}
	depth := strings.Count(rel, "/")
	if isDir {
		depth++
	}
	if depth > r.lim.MaxDepth {
		return "", &LimitError{Limit: "MaxDepth", Value: int64(r.lim.MaxDepth), Path: name}
	}
	return rel, nil
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// addDir records an explicit directory entry.
func (r *tarReader) addDir(p string) error {
	if _, ok := r.files[p]; ok {
		return ErrConflict
	}
	if r.dirs[p] {
		return ErrDuplicate
	}
	if err := r.addParents(p); err != nil {
		return err
	}
	r.dirs[p] = true
	return nil
}

// addParents records the directories above p, refusing any that is a file.
func (r *tarReader) addParents(p string) error {
	for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
		dir := p[:i]
		if _, ok := r.files[dir]; ok {
			return detail(ErrConflict, "%q is a file", dir)
		}
		if _, ok := r.dirs[dir]; ok {
			return nil // its parents are recorded already
		}
		r.dirs[dir] = false
	}
	return nil
}

// addFile checks the limits for a file of size bytes, then reads its data
// and padding.
// addFile reads the data of the file p and records it, with its data
// unless the data goes to OnFile only.
func (r *tarReader) addFile(p, name string, size int64, mode fs.FileMode) ([]byte, error) {
	if _, ok := r.files[p]; ok {
		return nil, ErrDuplicate
	}
	if _, ok := r.dirs[p]; ok {
		return nil, ErrConflict
	}
	if err := r.addParents(p); err != nil {
		return nil, err
	}
	switch {
	case len(r.files) >= r.lim.MaxFiles:
		return nil, &LimitError{Limit: "MaxFiles", Value: int64(r.lim.MaxFiles), Path: name}
	case size > r.lim.MaxFileBytes:
		return nil, &LimitError{Limit: "MaxFileBytes", Value: r.lim.MaxFileBytes, Path: name}
	case r.total+size > r.lim.MaxTotalBytes:
		return nil, &LimitError{Limit: "MaxTotalBytes", Value: r.lim.MaxTotalBytes, Path: name}
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r.in, data); err != nil {
		return nil, streamError(err)
	}
	if pad := padding(size); pad > 0 {
		tail := r.hdr[:pad]
		if _, err := io.ReadFull(r.in, tail); err != nil {
			return nil, streamError(err)
		}
		if !allZero(tail) {
			return nil, detail(ErrSize, "nonzero bytes after the %d bytes of data", size)
		}
	}
	r.total += size
	r.files[p] = nil
	if r.keep {
		r.files[p] = data
	}
	r.modes[p] = mode
	return data, nil
}
