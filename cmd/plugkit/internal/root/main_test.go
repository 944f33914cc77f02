package root

import (
	"os"
	"testing"

	"github.com/plugkit/plugkit/internal/testbin"
)

// TestMain removes the programs the tests built (the plugkit binary, the
// MCP test server) once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
