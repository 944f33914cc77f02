package hostile

import (
	"fmt"
	"math/rand/v2"
)

// Incompressible returns n files of size random bytes each, named prefix
// and a three-digit index ("data/f" gives data/f000, data/f001, ...), the
// same every time: a payload whose archive is as large as the payload, for
// the tests that show what holding it costs.
func Incompressible(prefix string, n, size int) map[string][]byte {
	rnd := rand.New(rand.NewPCG(1, 2))
	files := make(map[string][]byte, n)
	for i := range n {
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(rnd.Uint32())
		}
		files[fmt.Sprintf("%s%03d", prefix, i)] = b
	}
	return files
}
