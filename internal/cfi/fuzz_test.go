package cfi

import (
	"encoding/binary"
	"testing"
)

// seedSize bounds a seed: whole entries from a section's start up to it.
const seedSize = 2048

// FuzzTable: any bytes, read as .eh_frame or .debug_frame of either byte
// order, give rows with Table's invariants or a *DecodeError; never a
// panic or a hang (the parser runs without a recover). Seeds are the
// fixtures' sections.
func FuzzTable(f *testing.F) {
	for _, c := range []struct{ fixture, section string }{
		{"c-O2", ".eh_frame"}, {"c-O0", ".eh_frame"}, {"rust", ".eh_frame"}, {"libc", ".eh_frame"},
		{"c-debug-frame-v3", ".debug_frame"}, {"clang-debug-frame-64", ".debug_frame"}, {"go", ".debug_frame"},
	} {
		path := fixture(f, c.fixture)
		b, _ := rawSection(f, path, c.section)
		for _, s := range seeds(b, c.section == ".eh_frame") {
			f.Add(s, c.section == ".eh_frame", false)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, eh, bigEndian bool) {
		m := &machine{order: binary.LittleEndian, addrSize: 8, fp: 6, plt: true}
		if bigEndian {
			m.order = binary.BigEndian
		}
		name := ".debug_frame"
		if eh {
			name = ".eh_frame"
		}
		rows, err := parseSection("fuzz", name, b, 0x1000, m)
		if err != nil {
			if _, ok := err.(*DecodeError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		checkInvariants(t, rows)
	})
}

// seeds cuts a section into inputs of whole entries, up to seedSize bytes:
// from the start, and for .eh_frame (whose CIE pointers are relative) from
// each of its first CIEs, so that every kind of CIE a compiler emits (Rust's
// "zPLR" with a personality routine among them) is in a seed.
func seeds(b []byte, eh bool) [][]byte {
	starts := []int{0}
	if eh {
		offs, isCIE := entryOffsets(b, binary.LittleEndian, true)
		for i, o := range offs {
			if isCIE[i] && o > 0 && len(starts) < 4 {
				starts = append(starts, o)
			}
		}
	}
	var out [][]byte
	for _, start := range starts {
		end := start
		for off := start; off+4 <= len(b); {
			n := int(binary.LittleEndian.Uint32(b[off:]))
			if n == 0xffffffff {
				if off+12 > len(b) {
					break
				}
				n = int(binary.LittleEndian.Uint64(b[off+4:])) + 8
			}
			next := off + 4 + n
			if next-start > seedSize || next > len(b) || next <= off {
				break
			}
			off, end = next, next
		}
		if end == start {
			end = min(len(b), start+seedSize)
		}
		out = append(out, b[start:end])
	}
	return out
}
