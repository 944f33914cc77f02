// Command archivebench generates plugin trees and measures archive.Unpack
// for bench/archive.sh.
//
//	archivebench gen DIR FILES BYTES   write a valid plugin of about FILES files and BYTES bytes
//	archivebench unpack FILE [RUNS]    time Unpack+Digest in memory; report allocation and peak heap
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "archivebench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: archivebench gen DIR FILES BYTES | unpack FILE [RUNS]")
	}
	switch {
	case args[0] == "gen" && len(args) == 4:
		files, err1 := strconv.Atoi(args[2])
		size, err2 := strconv.ParseInt(args[3], 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("gen: FILES and BYTES must be integers")
		}
		return generate(args[1], files, size)
	case args[0] == "unpack" && (len(args) == 2 || len(args) == 3):
		runs := 5
		if len(args) == 3 {
			n, err := strconv.Atoi(args[2])
			if err != nil {
				return fmt.Errorf("unpack: RUNS must be an integer")
			}
			runs = n
		}
		return measureUnpack(args[1], runs)
	}
	return fmt.Errorf("unknown or malformed command %q", args[0])
}
