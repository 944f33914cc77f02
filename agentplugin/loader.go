package agentplugin

import (
	"errors"

	"github.com/plugkit/plugkit/snapshot"
)

// Limits bound one load. A zero field takes its default.
type Limits struct {
	MaxDiagnostics int // default 1,000; past it one final diagnostic says how many were dropped
	MaxMessageLen  int // bytes of one message (default 512)
	MaxJSONDepth   int // nesting of plugin.json and mcp.json (default 64)
	MaxSkills      int // default 10,000
	MaxServers     int // default 1,000
}

type loader struct{}

func newLoader(s *snapshot.Snapshot, opts Options) *loader { return &loader{} }

func (l *loader) load() (*Package, error) { return nil, errors.New("not implemented") }
