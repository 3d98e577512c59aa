package testutil_test

import (
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestFixturesTruth builds every fixture and checks that its truth decodes
// and is self-consistent: unique type names, members inside their type,
// bitfields inside their storage unit. It does not read any debug info;
// package dwarf compares the truth with what the loader finds.
func TestFixturesTruth(t *testing.T) {
	names := testutil.FixtureNames(t)
	if len(names) == 0 {
		t.Fatal("no fixtures under testdata/fixtures")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			b := testutil.Fixture(t, name)
			truth := b.Truth(t)
			if len(truth) == 0 {
				t.Fatal("empty truth")
			}
			seen := map[string]bool{}
			for _, tt := range truth {
				checkTruthType(t, tt)
				if seen[tt.Name] {
					t.Errorf("type %q reported twice", tt.Name)
				}
				seen[tt.Name] = true
			}
			if testing.Verbose() {
				var ns []string
				for _, tt := range truth {
					ns = append(ns, tt.Name)
				}
				t.Logf("%d types: %s", len(ns), strings.Join(ns, " | "))
			}
		})
	}
}

func checkTruthType(t *testing.T, tt testutil.TruthType) {
	t.Helper()
	if tt.Name == "" {
		t.Errorf("type without a name: %+v", tt)
	}
	if tt.Size < 0 {
		t.Errorf("%s: size %d", tt.Name, tt.Size)
	}
	if tt.Align <= 0 || tt.Align&(tt.Align-1) != 0 {
		t.Errorf("%s: alignment %d is not a power of two", tt.Name, tt.Align)
	}
	for _, m := range tt.Members {
		if m.Name == "" {
			t.Errorf("%s: member without a name", tt.Name)
		}
		if m.Offset < 0 || m.Size < 0 {
			t.Errorf("%s.%s: offset %d size %d", tt.Name, m.Name, m.Offset, m.Size)
		}
		if m.BitOffset != nil {
			bo := *m.BitOffset
			if m.BitSize <= 0 || m.BitSize > m.Size*8 {
				t.Errorf("%s.%s: bit size %d in a %d-byte unit", tt.Name, m.Name, m.BitSize, m.Size)
			}
			if bo < 0 || bo+m.BitSize > tt.Size*8 {
				t.Errorf("%s.%s: bits %d+%d outside %d bytes", tt.Name, m.Name, bo, m.BitSize, tt.Size)
			}
			if bo/8 != m.Offset {
				t.Errorf("%s.%s: offset %d is not bit offset %d / 8", tt.Name, m.Name, m.Offset, bo)
			}
			continue
		}
		if m.Offset+m.Size > tt.Size && !(m.Size == 0 && m.Offset == tt.Size) {
			t.Errorf("%s.%s: [%d, %d) outside %d bytes", tt.Name, m.Name, m.Offset, m.Offset+m.Size, tt.Size)
		}
	}
}
