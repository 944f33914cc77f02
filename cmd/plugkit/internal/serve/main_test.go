package serve

import (
	"os"
	"testing"

	"github.com/plugkit/plugkit/internal/testbin"
)

// TestMain removes the plugkit binary the tests built once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
