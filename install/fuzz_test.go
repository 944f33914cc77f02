package install

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseLock: any bytes either parse into a lock that passes its own
// checks and encodes to bytes that parse to the same lock, or are refused
// with ErrLockInvalid; never a panic.
func FuzzParseLock(f *testing.F) {
	f.Add(sampleLock().Encode())
	f.Add([]byte(`{"lockfileVersion": 1, "plugins": []}`))
	f.Add([]byte(`{"lockfileVersion": 1, "plugins": [], "plugins": []}`))
	f.Add([]byte(`{"lockfileVersion": 2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLock(b, Limits{})
		if err != nil {
			if !errors.Is(err, ErrLockInvalid) {
				t.Fatalf("error %v does not match ErrLockInvalid", err)
			}
			return
		}
		enc := l.Encode()
		again, err := ParseLock(enc, Limits{})
		if err != nil {
			t.Fatalf("encoded lock does not parse: %v\n%s", err, enc)
		}
		if !bytes.Equal(again.Encode(), enc) {
			t.Fatalf("encoding is not stable:\n%s\n%s", enc, again.Encode())
		}
	})
}

// FuzzFileList: a .files list either parses into sorted clean paths with
// known modes and digests, or is refused with ErrFileList.
func FuzzFileList(f *testing.F) {
	snap := kvV1().snapshot(f)
	f.Add(newFileList(snap, digestA).Encode())
	f.Add([]byte(`{"archiveDigest": "` + digestA + `", "files": [{"path": "../x", "mode": "0444", "sha256": "` + digestA[7:] + `"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseFileList(b)
		if err != nil {
			if !errors.Is(err, ErrFileList) {
				t.Fatalf("error %v does not match ErrFileList", err)
			}
			return
		}
		back, err := parseFileList(l.Encode())
		if err != nil || len(back.Files) != len(l.Files) {
			t.Fatalf("re-encoded list: %v", err)
		}
	})
}
