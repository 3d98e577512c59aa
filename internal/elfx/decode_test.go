package elfx

import (
	"errors"
	"strings"
	"testing"
)

// TestCatch: a panic under a deferred Catch (or inside Guard) becomes a
// *DecodeError naming the file and the section, the result is zeroed,
// and no panic leaves the function; without a panic nothing changes.
func TestCatch(t *testing.T) {
	read := func(fail bool) (n []int, err error) {
		defer Catch("prog", ".gopclntab", "table", &n, &err)
		n = []int{1, 2}
		if fail {
			var s []byte
			_ = s[5] // what a decoder trusting an offset does
		}
		return n, nil
	}
	n, err := read(false)
	if err != nil || len(n) != 2 {
		t.Fatalf("no panic: %v, %v", n, err)
	}
	n, err = read(true)
	var de *DecodeError
	if n != nil || !errors.As(err, &de) || de.File != "prog" || de.Section != ".gopclntab" ||
		!strings.HasPrefix(err.Error(), "prog: section .gopclntab: corrupt table: runtime error: index out of range") {
		t.Errorf("after a panic: %v, %v", n, err)
	}
	err = Guard("lib.so", ".debug_info", func() error { panic("bad abbrev") })
	if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), "lib.so: section .debug_info: bad abbrev (") {
		t.Errorf("Guard: %v", err)
	}
	if err := Guard("lib.so", ".debug_info", func() error { return nil }); err != nil {
		t.Errorf("Guard without a panic: %v", err)
	}
}
