package archive_test

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/plugkit/plugkit/archive"
	"github.com/plugkit/plugkit/snapshot"
)

func ExamplePack() {
	s, _ := snapshot.New(map[string][]byte{
		"plugin.json": []byte(`{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"demo"}`),
		"bin/server":  []byte("#!/bin/sh\n"),
	}, map[string]fs.FileMode{"bin/server": 0o755})

	// The OCI profile wants every entry under the plugin's name.
	b, err := archive.Pack(s, archive.PackOptions{Root: "demo"})
	if err != nil {
		panic(err)
	}
	again, _ := archive.Pack(s, archive.PackOptions{Root: "demo"})
	fmt.Println(archive.Digest(b) == archive.Digest(again))
	// Output: true
}

func ExampleUnpack() {
	s, _ := snapshot.New(map[string][]byte{"plugin.json": []byte(`{"name":"demo"}`), "bin/server": []byte("#!/bin/sh\n")},
		map[string]fs.FileMode{"bin/server": 0o755})
	b, _ := archive.Pack(s, archive.PackOptions{Root: "demo"})

	got, err := archive.Unpack(b, archive.UnpackOptions{Root: "demo"})
	if err != nil {
		panic(err)
	}
	for _, p := range got.Paths() {
		fmt.Println(got.Mode(p), p)
	}

	// Anything outside the required root is refused.
	_, err = archive.Unpack(b, archive.UnpackOptions{Root: "other"})
	fmt.Println(errors.Is(err, archive.ErrOutsideRoot))
	// Output:
	// -rwxr-xr-x bin/server
	// -rw-r--r-- plugin.json
	// true
}

func ExampleUnpack_limits() {
	s, _ := snapshot.FromFiles(map[string][]byte{"big": make([]byte, 2048)})
	b, _ := archive.Pack(s, archive.PackOptions{})

	_, err := archive.Unpack(b, archive.UnpackOptions{Limits: archive.Limits{MaxFileBytes: 1024}})
	var le *archive.LimitError
	if errors.As(err, &le) {
		fmt.Println(le.Limit, le.Path)
	}
	// Output: MaxFileBytes big
}

func ExampleDigest() {
	fmt.Println(archive.Digest([]byte("hello\n")))
	// Output: sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03
}

func ExampleParseDigest() {
	_, err := archive.ParseDigest("sha256:5891B5B522D5DF086D0FF0B110FBD9D21BB4FC7163AF34D08286A2E846F6BE03")
	fmt.Println(errors.Is(err, archive.ErrDigest))
	d, err := archive.ParseDigest("sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
	fmt.Println(d[:15], err)
	// Output:
	// true
	// sha256:5891b5b5 <nil>
}
