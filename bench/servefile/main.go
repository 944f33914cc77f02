// Command servefile serves one file with http.ServeFile at every path: the
// anchor that bench/registry.sh compares plugkit serve's artifact
// downloads with, on the same file.
//
//	servefile ADDR FILE
//
// It prints "listening on http://ADDR" once bound and serves until killed.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: servefile ADDR FILE")
		os.Exit(2)
	}
	file := os.Args[2]
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "servefile:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, file)
	}))
	fmt.Fprintln(os.Stderr, "servefile:", err)
	os.Exit(1)
}
