package main

import (
	"os"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestDwzAltFile: programs whose shared types dwz moved into an alternate
// file (.gnu_debugaltlink, DW_FORM_GNU_ref_alt and strp_alt; with
// --dwarf-5 a supplementary file, .debug_sup, DW_FORM_ref_sup4 and
// strp_sup) print as they did before dwz, in every form; without the
// alternate file, one warning that says so.
func TestDwzAltFile(t *testing.T) {
	for _, v := range [][]string{{"-gdwarf-4"}, {"-g"}, {"-g", "--dwarf-5"}} {
		flag := strings.Join(v, " ")
		plain, packed, alt := testutil.DwzPair(t, v[0], v[1:]...)
		for i := range plain {
			for _, args := range [][]string{nil, {"-E"}, {"-s"}, {"-C", "shared_context"}, {"-p", "-C", "shared_list"}} {
				_, want, _ := run(append(args, plain[i])...)
				code, got, errs := run(append(args, packed[i])...)
				if code != 0 || errs != "" || got != want || !strings.Contains(want, "shared") {
					t.Errorf("%s %v prog%d: exit %d %s\nafter dwz:\n%s\nbefore:\n%s", flag, args, i+1, code, errs, got, want)
				}
			}
		}
		if err := os.Rename(alt, alt+".hidden"); err != nil {
			t.Fatal(err)
		}
		code, _, errs := run(packed[0])
		if code != 0 || strings.Count(errs, "could not resolve dwz alternate debug file") != 1 {
			t.Errorf("%s without the alternate file: exit %d, stderr %q", flag, code, errs)
		}
	}
}
