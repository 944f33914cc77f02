package archive_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/plugkit/plugkit/archive"
)

// raw describes one tar entry for the hostile-archive generator. Fields
// left zero take the values a well-formed USTAR regular file would have.
type raw struct {
	name, prefix string
	typ          byte   // default '0'
	mode         string // octal digits, default "0000644"
	size         string // the size field, default len(data) in octal
	data         []byte
	magic        string // default "ustar\x00"
	version      string // default "00"
	linkname     string
	signedSum    bool               // compute the checksum over signed bytes
	sumDelta     int                // add to the checksum written
	sum          string             // the checksum field verbatim, instead of computing it
	edit         func([]byte)       // change the header before its checksum
	pad          func(n int) []byte // the padding after data, default zeros
}

// header builds the 512-byte header of e, independently of the package's
// own writer.
func (e raw) header() []byte {
	h := make([]byte, 512)
	put := func(off, n int, s string) { copy(h[off:off+n], s) }
	put(0, 100, e.name)
	put(100, 8, or(e.mode, "0000644")+"\x00")
	put(108, 8, "0000000\x00")
	put(116, 8, "0000000\x00")
	put(124, 12, or(e.size, fmt.Sprintf("%011o", len(e.data)))+"\x00")
	put(136, 12, "00000000000\x00")
	h[156] = e.typ
	if e.typ == 0 {
		h[156] = '0'
	}
	put(157, 100, e.linkname)
	put(257, 6, or(e.magic, "ustar\x00"))
	put(263, 2, or(e.version, "00"))
	put(345, 155, e.prefix)
	if e.edit != nil {
		e.edit(h)
	}
	copy(h[148:156], "        ")
	sum := 0
	for _, c := range h {
		if e.signedSum {
			sum += int(int8(c))
		} else {
			sum += int(c)
		}
	}
	put(148, 8, or(e.sum, fmt.Sprintf("%06o\x00 ", sum+e.sumDelta)))
	return h
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// tarOf concatenates entries and the two end-of-archive blocks.
func tarOf(entries ...raw) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		b.Write(e.header())
		b.Write(e.data)
		n := (512 - len(e.data)%512) % 512
		if e.pad != nil {
			b.Write(e.pad(n))
		} else {
			b.Write(make([]byte, n))
		}
	}
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

// gz compresses p as one gzip member.
func gz(p []byte) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	w.Write(p)
	w.Close()
	return b.Bytes()
}

// zeroReader yields n zero bytes.
func zeros(n int) []byte { return make([]byte, n) }

func file(name, data string) raw { return raw{name: name, data: []byte(data)} }

func dir(name string) raw { return raw{name: name, typ: '5', mode: "0000755"} }

// gnuOpts is the OCI layer reader's switch: GNU magic accepted.
var gnuOpts = archive.UnpackOptions{GNUMagic: true}

// gnuRaw gives e the GNU tar magic and version.
func gnuRaw(e raw) raw {
	e.magic, e.version = "ustar ", " \x00"
	return e
}

// hostileCase is an archive Unpack must refuse, and the error it must match.
type hostileCase struct {
	name string
	b    []byte
	want error
	opts archive.UnpackOptions
}

// hostileArchives builds every hostile archive: the shapes an archive reader must refuse. The large ones
// (a gzip bomb at the default limit, a tar bomb of 20,001 entries) are
// included only when big is true.
func hostileArchives(big bool) []hostileCase {
	ok := file("plugin.json", `{"name":"demo"}`)
	long := strings.Repeat("d/", 149) + "f" // 299 bytes
	deep := strings.Repeat("a/", 65) + "f"  // 65 directory levels
	cs := []hostileCase{
		{"symlink", gz(tarOf(raw{name: "evil", typ: '2', linkname: "/etc/passwd"})), archive.ErrSymlink, archive.UnpackOptions{}},
		{"symlink in a folder", gz(tarOf(ok, raw{name: "skills/x", typ: '2', linkname: "../../.."})), archive.ErrSymlink, archive.UnpackOptions{}},
		{"hard link", gz(tarOf(ok, raw{name: "copy", typ: '1', linkname: "plugin.json"})), archive.ErrHardLink, archive.UnpackOptions{}},
		{"character device", gz(tarOf(raw{name: "tty", typ: '3'})), archive.ErrSpecial, archive.UnpackOptions{}},
		{"block device", gz(tarOf(raw{name: "sda", typ: '4'})), archive.ErrSpecial, archive.UnpackOptions{}},
		{"fifo", gz(tarOf(raw{name: "pipe", typ: '6'})), archive.ErrSpecial, archive.UnpackOptions{}},
		{"contiguous file type", gz(tarOf(raw{name: "c", typ: '7', data: []byte("x")})), archive.ErrType, archive.UnpackOptions{}},
		{"unknown type flag", gz(tarOf(raw{name: "u", typ: 'A'})), archive.ErrType, archive.UnpackOptions{}},
		{"PAX extended header", gz(tarOf(raw{name: "PaxHeaders/x", typ: 'x', data: []byte("30 path=../../../etc/passwd\n")}, ok)), archive.ErrPAX, archive.UnpackOptions{}},
		{"PAX global header", gz(tarOf(raw{name: "pax_global_header", typ: 'g', data: []byte("19 comment=hello\n")}, ok)), archive.ErrPAX, archive.UnpackOptions{}},
		{"GNU long name", gz(tarOf(raw{name: "././@LongLink", typ: 'L', data: []byte(long + "\x00")}, file(long[:99], "x"))), archive.ErrGNU, archive.UnpackOptions{}},
		{"GNU long link", gz(tarOf(raw{name: "././@LongLink", typ: 'K', data: []byte("target\x00")})), archive.ErrGNU, archive.UnpackOptions{}},
		{"GNU sparse", gz(tarOf(raw{name: "sparse", typ: 'S'})), archive.ErrGNU, archive.UnpackOptions{}},
		{"GNU magic", gz(tarOf(raw{name: "plugin.json", magic: "ustar ", version: " \x00", data: []byte("{}")})), archive.ErrMagic, archive.UnpackOptions{}},
		{"GNU magic without the switch, directory", gz(tarOf(raw{name: "d/", typ: '5', magic: "ustar ", version: " \x00"})), archive.ErrMagic, archive.UnpackOptions{}},
		{"GNU magic: symlink", gz(tarOf(gnuRaw(raw{name: "evil", typ: '2', linkname: "/etc/passwd"}))), archive.ErrSymlink, gnuOpts},
		{"GNU magic: hard link", gz(tarOf(gnuRaw(file("plugin.json", "{}")), gnuRaw(raw{name: "copy", typ: '1', linkname: "plugin.json"}))), archive.ErrHardLink, gnuOpts},
		{"GNU magic: fifo", gz(tarOf(gnuRaw(raw{name: "pipe", typ: '6'}))), archive.ErrSpecial, gnuOpts},
		{"GNU magic: long name record", gz(tarOf(gnuRaw(raw{name: "././@LongLink", typ: 'L', data: []byte(long + "\x00")}))), archive.ErrGNU, gnuOpts},
		{"GNU magic: sparse file", gz(tarOf(gnuRaw(raw{name: "sparse", typ: 'S'}))), archive.ErrGNU, gnuOpts},
		{"GNU magic: PAX record", gz(tarOf(gnuRaw(raw{name: "pax", typ: 'x', data: []byte("11 path=x\n")}))), archive.ErrPAX, gnuOpts},
		{"GNU magic: old NUL type", gz(tarOf(gnuRaw(raw{name: "old", typ: 0, edit: func(h []byte) { h[156] = 0 }, data: []byte("x")}))), archive.ErrGNU, gnuOpts},
		{"GNU magic: atime set", gz(tarOf(gnuRaw(raw{name: "a", data: []byte("x"), edit: func(h []byte) { copy(h[345:357], "14000000000\x00") }}))), archive.ErrGNU, gnuOpts},
		{"GNU magic: a prefix a USTAR reader would join", gz(tarOf(gnuRaw(raw{name: "plugin.json", prefix: "evil", data: []byte("{}")}))), archive.ErrGNU, gnuOpts},
		{"GNU magic: byte 500 set", gz(tarOf(gnuRaw(raw{name: "a", data: []byte("x"), edit: func(h []byte) { h[500] = 1 }}))), archive.ErrGNU, gnuOpts},
		{"GNU magic: size in base 256", gz(tarOf(gnuRaw(raw{name: "a", edit: func(h []byte) { copy(h[124:136], "\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01") }}))), archive.ErrHeader, gnuOpts},
		{"GNU magic: mtime in base 256", gz(tarOf(gnuRaw(raw{name: "a", edit: func(h []byte) { copy(h[136:148], "\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01") }}))), archive.ErrHeader, gnuOpts},
		{"GNU magic: outside the root", gz(tarOf(gnuRaw(dir("demo/")), gnuRaw(file("other/plugin.json", "{}")))), archive.ErrOutsideRoot, archive.UnpackOptions{Root: "demo", GNUMagic: true}},
		{"V7 header without magic", gz(tarOf(raw{name: "plugin.json", magic: "\x00\x00\x00\x00\x00\x00", version: "\x00\x00", data: []byte("{}")})), archive.ErrMagic, archive.UnpackOptions{}},
		{"USTAR version 01", gz(tarOf(raw{name: "plugin.json", version: "01", data: []byte("{}")})), archive.ErrMagic, archive.UnpackOptions{}},
		{"bad checksum", gz(tarOf(raw{name: "plugin.json", sumDelta: 1, data: []byte("{}")})), archive.ErrChecksum, archive.UnpackOptions{}},
		{"checksum over signed bytes", gz(tarOf(raw{name: "caf\xc3\xa9.md", signedSum: true, data: []byte("x")})), archive.ErrChecksum, archive.UnpackOptions{}},
		{"checksum not octal", gz(tarOf(raw{name: "a", sum: "12a4\x00   ", data: []byte("x")})), archive.ErrChecksum, archive.UnpackOptions{}},
		{"size in base 256", gz(tarOf(raw{name: "a", edit: func(h []byte) { copy(h[124:136], "\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01") }})), archive.ErrHeader, archive.UnpackOptions{}},
		{"mode not octal", gz(tarOf(raw{name: "a", mode: "0000948"})), archive.ErrHeader, archive.UnpackOptions{}},
		{"mtime not octal", gz(tarOf(raw{name: "a", edit: func(h []byte) { copy(h[136:148], "hello world\x00") }})), archive.ErrHeader, archive.UnpackOptions{}},
		{"duplicate file", gz(tarOf(ok, ok)), archive.ErrDuplicate, archive.UnpackOptions{}},
		{"duplicate directory", gz(tarOf(dir("skills/"), dir("skills/"))), archive.ErrDuplicate, archive.UnpackOptions{}},
		{"absolute path", gz(tarOf(file("/etc/passwd", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"parent segment", gz(tarOf(file("../escape", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"inner parent segment", gz(tarOf(file("a/../../escape", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"dot segment", gz(tarOf(file("./plugin.json", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"empty segment", gz(tarOf(file("a//b", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"empty name", gz(tarOf(file("", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"file with trailing slash", gz(tarOf(file("a/", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"backslash", gz(tarOf(file(`a\..\..\b`, "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"drive prefix", gz(tarOf(file("C:/Windows/x", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"drive-relative prefix", gz(tarOf(file("c:x", "x"))), archive.ErrPath, archive.UnpackOptions{}},
		{"NUL in name", gz(tarOf(raw{name: "plugin.json\x00../../evil", data: []byte("x")})), archive.ErrPath, archive.UnpackOptions{}},
		{"NUL in prefix", gz(tarOf(raw{prefix: "a\x00b", name: "c", data: []byte("x")})), archive.ErrPath, archive.UnpackOptions{}},
		{"file then file below it", gz(tarOf(file("a", "x"), file("a/b", "y"))), archive.ErrConflict, archive.UnpackOptions{}},
		{"file below then file", gz(tarOf(file("a/b", "y"), file("a", "x"))), archive.ErrConflict, archive.UnpackOptions{}},
		{"directory then file", gz(tarOf(dir("a/"), file("a", "x"))), archive.ErrConflict, archive.UnpackOptions{}},
		{"file then directory", gz(tarOf(file("a", "x"), dir("a"))), archive.ErrConflict, archive.UnpackOptions{}},
		{"deep file under a file", gz(tarOf(file("a/b", "x"), file("a/b/c/d", "y"))), archive.ErrConflict, archive.UnpackOptions{}},
		{"size smaller than data", gz(tarOf(raw{name: "a", size: "00000000012", data: []byte(strings.Repeat("x", 20))})), archive.ErrSize, archive.UnpackOptions{}},
		{"size larger than data", gz(tarOf(raw{name: "a", size: "00000001130", data: []byte("short")}, file("b", "next"))), archive.ErrSize, archive.UnpackOptions{}},
		{"nonzero padding", gz(tarOf(raw{name: "a", data: []byte("x"), pad: func(n int) []byte { return bytes.Repeat([]byte{'!'}, n) }})), archive.ErrSize, archive.UnpackOptions{}},
		{"directory with data", gz(tarOf(raw{name: "d/", typ: '5', data: []byte("x")})), archive.ErrSize, archive.UnpackOptions{}},
		{"truncated in a header", gz(tarOf(ok)[:300]), archive.ErrTruncated, archive.UnpackOptions{}},
		{"truncated in data", gz(tarOf(file("a", strings.Repeat("x", 2000)))[:1024]), archive.ErrTruncated, archive.UnpackOptions{}},
		{"no end-of-archive blocks", gz(tarOf(ok)[:1024]), archive.ErrTruncated, archive.UnpackOptions{}},
		{"one end-of-archive block", gz(tarOf(ok)[:1536]), archive.ErrTruncated, archive.UnpackOptions{}},
		{"empty stream", gz(nil), archive.ErrTruncated, archive.UnpackOptions{}},
		{"empty input", nil, archive.ErrTruncated, archive.UnpackOptions{}},
		{"truncated gzip", gz(tarOf(ok))[:40], archive.ErrTruncated, archive.UnpackOptions{}},
		{"not gzip", tarOf(ok), archive.ErrGzip, archive.UnpackOptions{}},
		{"gzip checksum", corruptCRC(gz(tarOf(ok))), archive.ErrGzip, archive.UnpackOptions{}},
		{"data after end-of-archive", gz(append(tarOf(ok), "hidden"...)), archive.ErrTrailingData, archive.UnpackOptions{}},
		{"entry after a lone zero block", gz(append(tarOf(ok)[:1024+512], tarOf(file("b", "x"))...)), archive.ErrTrailingData, archive.UnpackOptions{}},
		{"bytes after gzip", append(gz(tarOf(ok)), "x"...), archive.ErrTrailingData, archive.UnpackOptions{}},
		{"second gzip member", append(gz(tarOf(ok)), gz(tarOf(file("evil", "x")))...), archive.ErrTrailingData, archive.UnpackOptions{}},
		{"gzip bomb", gz(append(tarOf(ok), zeros(2<<20)...)), archive.ErrLimit, archive.UnpackOptions{Limits: archive.Limits{MaxUncompressedBytes: 1 << 20}}},
		{"tar bomb of entries", gz(tarOf(manyDirs(101)...)), archive.ErrLimit, archive.UnpackOptions{Limits: archive.Limits{MaxEntries: 100}}},
		{"too many files", gz(tarOf(manyFiles(11)...)), archive.ErrLimit, archive.UnpackOptions{Limits: archive.Limits{MaxFiles: 10}}},
		{"1 GB claimed size", gz(tarOf(raw{name: "huge", size: fmt.Sprintf("%011o", 1<<30)})), archive.ErrLimit, archive.UnpackOptions{}},
		{"total bytes", gz(tarOf(file("a", "12345"), file("b", "67890"))), archive.ErrLimit, archive.UnpackOptions{Limits: archive.Limits{MaxTotalBytes: 8}}},
		{"compressed size", gz(tarOf(ok)), archive.ErrLimit, archive.UnpackOptions{Limits: archive.Limits{MaxArchiveBytes: 10}}},
		{"65 directory levels", gz(tarOf(split(deep, "x"))), archive.ErrLimit, archive.UnpackOptions{}},
		{"outside the root", gz(tarOf(file("demo/plugin.json", "{}"), file("other/x", "x"))), archive.ErrOutsideRoot, archive.UnpackOptions{Root: "demo"}},
		{"root prefix without slash", gz(tarOf(file("demox/plugin.json", "{}"))), archive.ErrOutsideRoot, archive.UnpackOptions{Root: "demo"}},
		{"root is a file", gz(tarOf(file("demo", "{}"))), archive.ErrOutsideRoot, archive.UnpackOptions{Root: "demo"}},
	}
	if big {
		cs = append(cs,
			hostileCase{"gzip bomb at the default limit", gz(append(tarOf(ok), zeros(archive.DefaultMaxUncompressedBytes)...)), archive.ErrLimit, archive.UnpackOptions{}},
			hostileCase{"tar bomb of 20,001 tiny entries", gz(tarOf(manyFiles(20_001)...)), archive.ErrLimit, archive.UnpackOptions{Limits: archive.Limits{MaxFiles: 30_000}}},
		)
	}
	return cs
}

// split makes a file entry whose path uses the prefix field.
func split(p, data string) raw {
	i := strings.LastIndexByte(p[:min(len(p), 156)], '/')
	return raw{prefix: p[:i], name: p[i+1:], data: []byte(data)}
}

func manyFiles(n int) []raw {
	es := make([]raw, n)
	for i := range es {
		es[i] = file(fmt.Sprintf("f/%06d", i), "")
	}
	return es
}

func manyDirs(n int) []raw {
	es := make([]raw, n)
	for i := range es {
		es[i] = dir(fmt.Sprintf("d%06d/", i))
	}
	return es
}

// corruptCRC flips a bit of the gzip trailer's CRC-32.
func corruptCRC(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)-8] ^= 1
	return c
}

func TestUnpackRefusesHostileArchives(t *testing.T) {
	for _, c := range hostileArchives(!testing.Short()) {
		for _, u := range unpackers {
			t.Run(c.name+"/"+u.name, func(t *testing.T) {
				s, err := u.unpack(c.b, c.opts)
				if !errors.Is(err, c.want) {
					t.Fatalf("%s = %v, %v; want an error matching %v", u.name, s, err, c.want)
				}
				var ee *archive.EntryError
				var le *archive.LimitError
				if errors.As(err, &ee) && ee.Index < 0 {
					t.Errorf("EntryError from %s has Index %d", u.name, ee.Index)
				}
				if c.want == archive.ErrLimit && !errors.As(err, &le) {
					t.Errorf("%v is not a *LimitError", err)
				}
			})
		}
	}
}

// An entry's error names the entry and its position.
func TestEntryErrorNamesTheEntry(t *testing.T) {
	_, err := archive.Unpack(gz(tarOf(file("plugin.json", "{}"), raw{name: "skills/evil", typ: '2', linkname: "/"})), archive.UnpackOptions{})
	var ee *archive.EntryError
	if !errors.As(err, &ee) || ee.Path != "skills/evil" || ee.Index != 1 || !errors.Is(err, archive.ErrSymlink) {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), `"skills/evil"`) {
		t.Errorf("message %q does not name the entry", err)
	}
}

// Limits name themselves, and a huge claimed size is refused before any
// of its data is read: the error is the limit, not truncation.
func TestLimitErrorNamesTheLimit(t *testing.T) {
	cases := map[string]struct {
		b    []byte
		opts archive.UnpackOptions
	}{
		"MaxFileBytes":         {gz(tarOf(raw{name: "huge", size: fmt.Sprintf("%011o", 1<<30)})), archive.UnpackOptions{}},
		"MaxUncompressedBytes": {gz(append(tarOf(), zeros(4096)...)), archive.UnpackOptions{Limits: archive.Limits{MaxUncompressedBytes: 2048}}},
		"MaxEntries":           {gz(tarOf(manyDirs(3)...)), archive.UnpackOptions{Limits: archive.Limits{MaxEntries: 2}}},
		"MaxFiles":             {gz(tarOf(manyFiles(3)...)), archive.UnpackOptions{Limits: archive.Limits{MaxFiles: 2}}},
		"MaxTotalBytes":        {gz(tarOf(file("a", "123"), file("b", "456"))), archive.UnpackOptions{Limits: archive.Limits{MaxTotalBytes: 5}}},
		"MaxArchiveBytes":      {gz(tarOf()), archive.UnpackOptions{Limits: archive.Limits{MaxArchiveBytes: 5}}},
		"MaxDepth":             {gz(tarOf(file("a/b/c", "x"))), archive.UnpackOptions{Limits: archive.Limits{MaxDepth: 1}}},
	}
	for name, c := range cases {
		_, err := archive.Unpack(c.b, c.opts)
		var le *archive.LimitError
		if !errors.As(err, &le) || le.Limit != name {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// Exactly at a limit is allowed; the stream may end exactly at
// MaxUncompressedBytes.
func TestLimitsAreInclusive(t *testing.T) {
	tr := tarOf(file("a", "123"), file("b/c", "456"))
	opts := archive.UnpackOptions{Limits: archive.Limits{
		MaxUncompressedBytes: int64(len(tr)), MaxTotalBytes: 6, MaxFileBytes: 3,
		MaxFiles: 2, MaxEntries: 2, MaxDepth: 1, MaxArchiveBytes: int64(len(gz(tr))),
	}}
	if _, err := archive.Unpack(gz(tr), opts); err != nil {
		t.Fatal(err)
	}
}

// Only the permission bits survive: setuid, setgid and sticky are dropped.
func TestUnpackStripsSpecialModeBits(t *testing.T) {
	for mode, want := range map[string]string{"0004755": "-rwxr-xr-x", "0002644": "-rw-r--r--", "0001777": "-rwxrwxrwx", "0007777": "-rwxrwxrwx", "0100600": "-rw-------"} {
		s, err := archive.Unpack(gz(tarOf(raw{name: "bin/x", mode: mode, data: []byte("x")})), archive.UnpackOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Mode("bin/x").String(); got != want {
			t.Errorf("mode %s: got %s, want %s", mode, got, want)
		}
	}
}

// What other writers legitimately add is accepted: directory entries (and
// empty ones), the old NUL type flag, record padding after the end blocks,
// zeros after the gzip member, a 100-byte name with no NUL.
func TestUnpackAcceptsWellFormedVariants(t *testing.T) {
	name100 := strings.Repeat("n", 100)
	tr := tarOf(dir("demo/"), dir("demo/empty/"), file("demo/plugin.json", "{}"), raw{name: "demo/old", typ: 0, data: []byte("v7 type")},
		file("demo/"+name100[:95], "long"))
	tr = append(tr, zeros(10240-len(tr)%10240)...)
	b := append(gz(tr), zeros(100)...)
	s, err := archive.Unpack(b, archive.UnpackOptions{Root: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Files) != 3 || string(s.Files["plugin.json"]) != "{}" || string(s.Files["old"]) != "v7 type" {
		t.Errorf("files = %v", s.Paths())
	}
	s, err = archive.Unpack(gz(tarOf(raw{name: name100, data: []byte("x")})), archive.UnpackOptions{})
	if err != nil || len(s.Files) != 1 || s.Files[name100] == nil {
		t.Fatalf("100-byte name: %v %v", s, err)
	}
}

// A bomb of 64 MiB of zeros is stopped at a 1 MiB limit: it costs few
// allocations, and memory bounded by the limit, not by the bomb.
func TestGzipBombStopsAtTheLimit(t *testing.T) {
	bomb := gz(append(tarOf(), zeros(64<<20)...))
	_, err := archive.Unpack(bomb, archive.UnpackOptions{Limits: archive.Limits{MaxUncompressedBytes: 1 << 20}})
	if !errors.Is(err, archive.ErrLimit) {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1, func() {
		archive.Unpack(bomb, archive.UnpackOptions{Limits: archive.Limits{MaxUncompressedBytes: 1 << 20}})
	})
	if allocs > 1000 {
		t.Errorf("%v allocations for a refused bomb", allocs)
	}
}
