package main

import (
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestDwzAltFile: the functions of programs dwz compressed (names in the
// alternate file's strings, parameter types there) list as before dwz.
func TestDwzAltFile(t *testing.T) {
	for _, v := range [][]string{{"-gdwarf-4"}, {"-g"}, {"-g", "--dwarf-5"}} {
		flag := strings.Join(v, " ")
		plain, packed, _ := testutil.DwzPair(t, v[0], v[1:]...)
		for i := range plain {
			for _, args := range [][]string{{"--no-cache"}, {"--no-cache", "-P"}, {"--no-cache", "--locations"}, {"-S"}, {"-V", "-T"}} {
				_, want, _ := runGofunct(append(args, plain[i])...)
				code, got, errs := runGofunct(append(args, packed[i])...)
				if code != 0 || got != want || !strings.Contains(want, "main") {
					t.Errorf("%s %v prog%d: exit %d %s\nafter dwz:\n%s\nbefore:\n%s", flag, args, i+1, code, errs, got, want)
				}
			}
		}
	}
}
