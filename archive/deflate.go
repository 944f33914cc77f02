package archive

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"sync"
)

// chunkSize is the unit of parallel compression. It is part of the
// format: the compressed bytes depend on it (never on the number of CPUs).
const chunkSize = 256 << 10

// gzipHeader is the fixed 10-byte gzip member header: deflate, no flags
// (so no name or comment), mtime 0, no extra flags, OS 255 ("unknown").
var gzipHeader = [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, gzipOSUnknown}

// gzipChunked compresses p as one gzip member, deflating fixed chunks in
// parallel. Each chunk is primed with the 32 KiB of input before it (the
// whole deflate window, so matches across chunks are not lost) and ends
// with a sync flush, so the chunks concatenate into one deflate stream;
// the last is closed. The output depends only on p.
func gzipChunked(p []byte) []byte {
	n := max(1, (len(p)+chunkSize-1)/chunkSize)
	out := make([][]byte, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = deflateChunk(p, i*chunkSize, min(len(p), (i+1)*chunkSize), i == n-1)
		}()
	}
	wg.Wait()
	size := len(gzipHeader) + 8
	for _, c := range out {
		size += len(c)
	}
	gz := make([]byte, 0, size)
	gz = append(gz, gzipHeader[:]...)
	for _, c := range out {
		gz = append(gz, c...)
	}
	gz = binary.LittleEndian.AppendUint32(gz, crc32.ChecksumIEEE(p))
	return binary.LittleEndian.AppendUint32(gz, uint32(len(p)))
}

// deflateChunk deflates p[start:end] with the window before start as its
// dictionary; the final chunk ends the stream, the others a sync flush.
func deflateChunk(p []byte, start, end int, final bool) []byte {
	var buf bytes.Buffer
	buf.Grow((end - start) / 2)
	// The level is a valid constant, so NewWriterDict cannot fail; writes
	// to a bytes.Buffer cannot fail either.
	w, _ := flate.NewWriterDict(&buf, CompressionLevel, p[max(0, start-32<<10):start])
	w.Write(p[start:end])
	if final {
		w.Close()
	} else {
		w.Flush()
	}
	return buf.Bytes()
}
