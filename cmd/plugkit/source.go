package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/plugkit/plugkit/agentplugin"
	"github.com/plugkit/plugkit/snapshot"
)

// readSource reads a plugin from a directory or an archive file into a
// snapshot. Every verb that takes a plugin path reads it through here, so
// that a directory and its archive are judged by the same loader.
func readSource(path string) (*snapshot.Snapshot, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return snapshot.ReadDir(path, snapshot.Options{})
	}
	return readArchiveFile(path)
}

// loadSource reads and loads a plugin. A rejection is returned as an
// *agentplugin.RejectedError; anything else is an I/O or limit error.
func loadSource(path string, opts agentplugin.Options) (*agentplugin.Package, error) {
	s, err := readSource(path)
	if err != nil {
		return nil, err
	}
	return agentplugin.Load(s, opts)
}

// parseTransports parses a --transports value such as "stdio,streamable-http".
func parseTransports(v string) ([]agentplugin.Transport, error) {
	if v == "" {
		return nil, nil
	}
	var ts []agentplugin.Transport
	for _, name := range strings.Split(v, ",") {
		t := agentplugin.Transport(strings.TrimSpace(name))
		found := false
		for _, known := range agentplugin.AllTransports {
			found = found || t == known
		}
		if !found {
			return nil, fmt.Errorf("unknown transport %q (known: stdio, streamable-http, sse)", t)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// isInputError reports whether err is about the plugin's content (a limit
// hit, an archive refused) rather than about reading it at all.
func isInputError(err error) bool {
	return errors.Is(err, snapshot.ErrLimit) || errors.Is(err, errBadArchive)
}
