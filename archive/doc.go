// Package archive packs a plugin snapshot into a deterministic gzip-compressed
// POSIX USTAR archive, and unpacks such archives from strangers safely.
//
// Archives are bytes in, bytes out: Unpack never touches the filesystem, and
// Pack reads nothing but the snapshot it is given. The SHA-256 of the archive
// bytes (Digest) is a plugin release's identity, so Pack must give the same
// bytes for the same snapshot, and Unpack must refuse anything another tool
// could read differently.
//
// # Format written by Pack
//
//   - POSIX USTAR (magic "ustar\x00", version "00") with 512-byte headers
//     written by this package, never a PAX or GNU extension. A path that does
//     not fit the 100-byte name field, or split at a '/' into the 155-byte
//     prefix and 100-byte name fields, is an error (ErrNameTooLong).
//   - Regular files only (type flag '0'), sorted by path bytes; no directory
//     entries (directories are implied by the paths below them).
//   - uid and gid 0, empty owner and group names, mtime 0 (the epoch),
//     device numbers 0, checksum written as six octal digits, NUL, space.
//   - Mode 0755 when the snapshot gives the file any execute bit, 0644
//     otherwise: no other permission survives packing.
//   - The archive ends with the two zero blocks of end-of-archive and no
//     record padding.
//   - gzip (RFC 1952), one member, with no file name, no comment,
//     modification time 0, no extra flags and OS byte 255 ("unknown"): the
//     bytes do not depend on where they were made.
//   - Deflate by compress/flate at level CompressionLevel (6), in chunks of
//     256 KiB of tar stream compressed in parallel: each chunk is primed with
//     the 32 KiB before it (the whole deflate window) and ends with a sync
//     flush, the last one with the final block. The bytes depend on the chunk
//     size, never on the number of CPUs; an archive under 256 KiB of tar is
//     exactly what compress/gzip writes at level 6. They do depend on the
//     Go toolchain's compress/flate: a test pins the archives of several
//     plugins, so that a toolchain writing other bytes fails it before any
//     digest changes (docs/install.md explains the trade). bench/archive.sh
//     compares packing with tar | gzip -6.
//
// # What Unpack accepts
//
// One gzip member holding a USTAR archive of regular files (type '0' or NUL)
// and directories (type '5'; they are checked and then dropped, so an empty
// directory leaves no trace). Everything else is an error that wraps one of
// the sentinel errors below and, for a header, is an *EntryError naming the
// entry: links, devices and fifos, other type flags, PAX and GNU headers,
// non-USTAR magic, bad checksums (including sums computed over signed
// bytes), malformed numeric fields, duplicate paths, a path that is both a
// file and a directory, absolute paths, "." ".." and empty segments,
// backslashes, Windows drive prefixes, NUL in names, nonzero padding after
// file data (the size field disagrees with the data), truncation, nonzero
// bytes after the end-of-archive blocks or after the gzip member. Only the
// permission bits 0777 of a file's mode are kept, never setuid, setgid or
// sticky.
//
// Limits (see Limits) are enforced while streaming: the compressed size
// before anything is read, a header's size field before its data is read,
// and the decompressed stream as it is inflated, so memory stays bounded by
// the limits whatever the archive claims.
package archive
