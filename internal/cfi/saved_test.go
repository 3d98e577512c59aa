package cfi

import (
	"debug/elf"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestSavedOracle: at every row readelf interprets from the C fixtures and
// the C library, Frames.Saved gives each callee-saved register (rbx, rbp,
// r12 to r15) the rule readelf shows: saved at the same offset from the
// CFA ("c-16"), else not saved (readelf's "u", a column not set yet, is
// the register keeping its value). At least 1000 rules are compared.
func TestSavedOracle(t *testing.T) {
	regs := map[string]int{"rbx": 3, "rbp": 6, "r12": 12, "r13": 13, "r14": 14, "r15": 15}
	compared := 0
	for _, name := range []string{"c-O2", "c-O0", "clang-O2", "libc"} {
		t.Run(name, func(t *testing.T) {
			path := fixture(t, name)
			f := open(t, path)
			if f.Machine != elf.EM_X86_64 {
				t.Skip("x86-64 registers")
			}
			fr, err := ReadFrames(f)
			if err != nil {
				t.Fatal(err)
			}
			o := readelfOracle(t, path, f.Machine)
			bad := 0
			for _, fde := range o.fdes[0] {
				for _, row := range fde.rows {
					for col, reg := range regs {
						text, ok := row.all[col]
						if !ok {
							text = "u" // not mentioned by this FDE
						}
						got, ok := fr.Saved(row.loc, reg)
						if !ok {
							bad++
							t.Errorf("%#x: no rule for %s", row.loc, col)
							continue
						}
						want := "not saved"
						if strings.HasPrefix(text, "c") {
							off, err := strconv.ParseInt(text[1:], 10, 64)
							if err != nil {
								t.Fatalf("readelf rule %q", text)
							}
							want = fmt.Sprintf("[CFA%+d]", off)
						}
						have := "not saved"
						if got.Kind == Offset {
							have = got.String()
						}
						if have != want && bad < 10 {
							bad++
							t.Errorf("%#x: %s: %s, readelf %q", row.loc, col, have, text)
						}
						compared++
					}
				}
			}
		})
	}
	t.Logf("compared %d rules", compared)
	if compared < 1000 {
		t.Errorf("compared %d rules, want at least 1000", compared)
	}
}
