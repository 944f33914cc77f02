package archive

import (
	"bytes"
	"strconv"
)

// blockSize is the tar block: every header is one block, and file data is
// padded with zeros to a whole number of blocks.
const blockSize = 512

// block is one 512-byte tar block.
type block [blockSize]byte

// field is a byte range of a USTAR header.
type field struct{ off, len int }

// The USTAR header fields (POSIX.1-1988, pax "ustar" format) this package
// reads or writes. The others — linkname (157, 100), uname (265, 32) and
// gname (297, 32) — are left zero by Pack and never read by Unpack: links
// are refused by type, and owner names carry no meaning here.
var (
	fName     = field{0, 100}
	fMode     = field{100, 8}
	fUID      = field{108, 8}
	fGID      = field{116, 8}
	fSize     = field{124, 12}
	fMtime    = field{136, 12}
	fChksum   = field{148, 8}
	fType     = field{156, 1}
	fMagic    = field{257, 6}
	fVersion  = field{263, 2}
	fDevmajor = field{329, 8}
	fDevminor = field{337, 8}
	fPrefix   = field{345, 155}
)

// USTAR magic and version, and the type flags this package knows.
const (
	magicUSTAR   = "ustar\x00"
	versionUSTAR = "00"
	// GNU tar's magic and version: "ustar  \x00" over the same 8 bytes.
	magicGNU   = "ustar "
	versionGNU = " \x00"

	typeReg     = '0'
	typeRegOld  = '\x00'
	typeLink    = '1'
	typeSymlink = '2'
	typeChar    = '3'
	typeBlock   = '4'
	typeDir     = '5'
	typeFifo    = '6'
)

func (b *block) get(f field) []byte { return b[f.off : f.off+f.len] }

// isZero reports whether the block is all zero bytes (an end-of-archive
// marker).
func (b *block) isZero() bool { return allZero(b[:]) }

// sums returns the header checksum computed, as POSIX requires, over the
// header's bytes as unsigned values with the checksum field taken as eight
// spaces; and the same sum over signed bytes, which some old writers used.
func (b *block) sums() (unsigned, signed int64) {
	for i, c := range b {
		if i >= fChksum.off && i < fChksum.off+fChksum.len {
			c = ' '
		}
		unsigned += int64(c)
		signed += int64(int8(c))
	}
	return unsigned, signed
}

// putOctal writes v as zero-padded octal digits filling all but the last
// byte of the field, and a NUL in the last.
func (b *block) putOctal(f field, v int64) {
	dst := b.get(f)
	dst[len(dst)-1] = 0
	for i := len(dst) - 2; i >= 0; i-- {
		dst[i] = byte('0' + v&7)
		v >>= 3
	}
}

// fitsOctal reports whether v fits a field with putOctal.
func fitsOctal(f field, v int64) bool { return v >= 0 && v < 1<<(3*(f.len-1)) }

// putChecksum computes and stores the header checksum as GNU tar and
// POSIX writers do: six octal digits, a NUL, a space.
func (b *block) putChecksum() {
	sum, _ := b.sums()
	dst := b.get(fChksum)
	for i := 5; i >= 0; i-- {
		dst[i] = byte('0' + sum&7)
		sum >>= 3
	}
	dst[6], dst[7] = 0, ' '
}

// parseOctal reads a numeric header field: optional leading spaces, octal
// digits, then only NULs and spaces. An all-NUL or all-space field is 0.
// Base-256 numbers (a GNU extension, high bit set) and any other byte are
// refused.
func parseOctal(raw []byte) (int64, bool) {
	s := bytes.TrimLeft(raw, " ")
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '7' {
		end++
	}
	for _, c := range s[end:] {
		if c != 0 && c != ' ' {
			return 0, false
		}
	}
	if end == 0 {
		return 0, true
	}
	v, err := strconv.ParseInt(string(s[:end]), 8, 64)
	return v, err == nil
}

// cString returns a string field up to its first NUL, and whether the rest
// of the field is all NUL (a NUL followed by more name is refused).
func cString(raw []byte) (string, bool) {
	i := bytes.IndexByte(raw, 0)
	if i < 0 {
		return string(raw), true
	}
	return string(raw[:i]), allZero(raw[i:])
}

func allZero(p []byte) bool {
	for _, c := range p {
		if c != 0 {
			return false
		}
	}
	return true
}
