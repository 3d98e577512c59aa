package layout_test

import (
	"strconv"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/types"
)

func load(t *testing.T, path string) *types.Spec {
	t.Helper()
	spec, err := dwarf.Load(path, nil)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return spec
}

func itoa(i int) string     { return strconv.Itoa(i) }
func quote(s string) string { return strconv.Quote(s) }
