package probe

import (
	"testing"

	"github.com/binscope/binscope/dwarf"
)

// openResolver opens path's debug info, closed when the test ends, and a
// resolver over it.
func openResolver(t *testing.T, path string) *Resolver {
	t.Helper()
	f, err := dwarf.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := NewResolver(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
