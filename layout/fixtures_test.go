package layout_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// fixtures are the fixtures whose every type the tests analyse.
var fixtures = []string{"c-layouts", "c-layouts-dwarf2", "cpp-layouts", "go-layouts", "go-prom", "rust-layouts", "zig-layouts"}

// composites returns every complete struct, union and class of spec.
func composites(spec *types.Spec) []*types.Struct {
	var out []*types.Struct
	seen := map[*types.Struct]bool{}
	for _, ty := range spec.Types() {
		if s, ok := types.Resolve(ty).(*types.Struct); ok && !s.Incomplete && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// TestInvariant analyses every struct, union and class of every fixture and
// requires size = members + holes + padding (bits included), no warning,
// holes and bit holes inside the type and in order, members in memory
// order, and every printer to print the same twice.
func TestInvariant(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx, func(t *testing.T) {
			spec := load(t, testutil.Fixture(t, fx).Path)
			n := 0
			for _, s := range composites(spec) {
				l, err := layout.Analyze(s, nil)
				if err != nil {
					t.Errorf("%s: %v", s.Name, err)
					continue
				}
				n++
				checkLayout(t, l)
			}
			if n < 10 {
				t.Errorf("only %d types analysed", n)
			}
			t.Logf("%d types", n)
		})
	}
}

func checkLayout(t *testing.T, l *layout.Layout) {
	t.Helper()
	if err := l.Invariant(); err != nil {
		t.Errorf("%s: %v", l.Name, err)
	}
	if l.Warning != "" {
		t.Errorf("%s: warning %s", l.Name, l.Warning)
	}
	var holes int64
	prev := int64(-1)
	for _, h := range l.Holes {
		if h.Size <= 0 || h.Offset <= prev || h.Offset+h.Size > l.Size {
			t.Errorf("%s: bad hole %+v", l.Name, h)
		}
		prev = h.Offset
		holes += h.Size
	}
	if holes != l.SumHoles {
		t.Errorf("%s: holes sum to %d, SumHoles %d", l.Name, holes, l.SumHoles)
	}
	var bits types.Bits
	for _, h := range l.BitHoles {
		if h.Size <= 0 || h.Offset < 0 || h.Offset+h.Size > types.Bits(l.Size*8) {
			t.Errorf("%s: bad bit hole %+v", l.Name, h)
		}
		bits += h.Size
	}
	if bits != l.SumBitHoles {
		t.Errorf("%s: bit holes sum to %d, SumBitHoles %d", l.Name, bits, l.SumBitHoles)
	}
	for i := 1; i < len(l.Members); i++ {
		if l.Members[i].BitOffset < l.Members[i-1].BitOffset {
			t.Errorf("%s: members not in memory order at %s", l.Name, l.Members[i].Name())
		}
	}
	if want := (l.Size + l.CachelineSize - 1) / l.CachelineSize; l.Cachelines != want {
		t.Errorf("%s: %d cachelines, want %d", l.Name, l.Cachelines, want)
	}
	for _, b := range l.Boundaries {
		if b.Offset%l.CachelineSize != 0 || b.Offset >= l.Size {
			t.Errorf("%s: bad boundary %+v", l.Name, b)
		}
		if b.Member >= 0 {
			s := &l.Members[b.Member]
			if s.Offset > b.Offset || s.End() <= b.Offset || b.Crosses != (s.BitOffset < types.Bits(b.Offset*8)) {
				t.Errorf("%s: boundary %+v: member %s at %d..%d", l.Name, b, s.Name(), s.Offset, s.End())
			}
		}
	}
	r := layout.Reorganize(l, nil)
	if r.Layout.Size > l.Size {
		t.Errorf("%s: reorganized to %d bytes from %d", l.Name, r.Layout.Size, l.Size)
	}
	if r.Moved {
		if err := r.Layout.Invariant(); err != nil {
			t.Errorf("%s reorganized: %v", l.Name, err)
		}
		if len(r.Layout.Members) != len(l.Members) {
			t.Errorf("%s reorganized: %d members, want %d", l.Name, len(r.Layout.Members), len(l.Members))
		}
	}
	for _, print := range []struct {
		name string
		f    func(*bytes.Buffer) error
	}{
		{"text", func(b *bytes.Buffer) error { return layout.WriteText(b, l, nil) }},
		{"expanded", func(b *bytes.Buffer) error {
			return layout.WriteText(b, l, &layout.PrintOptions{Expand: true, Hex: true})
		}},
		{"native", func(b *bytes.Buffer) error { return layout.WriteNative(b, l, nil) }},
		{"json", func(b *bytes.Buffer) error { return layout.WriteJSON(b, []*layout.Layout{l}, nil) }},
		{"reorganized", func(b *bytes.Buffer) error { return layout.WriteReorganized(b, r, nil) }},
	} {
		var a, b bytes.Buffer
		if err := print.f(&a); err != nil {
			t.Errorf("%s %s: %v", l.Name, print.name, err)
		}
		if err := print.f(&b); err != nil {
			t.Errorf("%s %s: %v", l.Name, print.name, err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) || a.Len() == 0 {
			t.Errorf("%s %s: printing twice differs or prints nothing", l.Name, print.name)
		}
	}
}

// goldenTypes are the types of each fixture whose printed forms are kept
// as golden files: those the fixture's own language reports (its truth).
func goldenTypes(t *testing.T, b *testutil.Built, spec *types.Spec) []*layout.Layout {
	t.Helper()
	var out []*layout.Layout
	for _, tt := range b.Truth(t) {
		for _, ty := range spec.Lookup(tt.Name) {
			s, ok := types.Resolve(ty).(*types.Struct)
			if !ok || s.Incomplete {
				continue
			}
			l, err := layout.Analyze(s, nil)
			if err != nil {
				t.Fatalf("%s: %v", tt.Name, err)
			}
			l.Name = tt.Name
			out = append(out, l)
			break
		}
	}
	if len(out) < 5 {
		t.Fatalf("only %d of the fixture's types found", len(out))
	}
	return out
}

// builtAt matches the directory part of a fixture source path.
var builtAt = regexp.MustCompile(`(?:/[^\s"/]+)+/(testdata/fixtures/)`)

// TestGolden keeps the text, native, reorganized and JSON forms of the
// fixtures' types as golden files (go test ./layout -update rewrites them).
func TestGolden(t *testing.T) {
	for _, fx := range []string{"c-layouts", "cpp-layouts", "go-layouts", "rust-layouts", "zig-layouts"} {
		t.Run(fx, func(t *testing.T) {
			b := testutil.Fixture(t, fx)
			spec := load(t, b.Path)
			ls := goldenTypes(t, b, spec)
			var text, native, reorg, json bytes.Buffer
			for _, l := range ls {
				if err := layout.WriteText(&text, l, nil); err != nil {
					t.Fatal(err)
				}
				if err := layout.WriteText(&native, l, &layout.PrintOptions{Native: true}); err != nil {
					t.Fatal(err)
				}
				if err := layout.WriteReorganized(&reorg, layout.Reorganize(l, nil), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := layout.WriteJSON(&json, ls, nil); err != nil {
				t.Fatal(err)
			}
			// Declarations name files where the fixture was built (the
			// fixture cache is shared by checkouts): keep the part from
			// testdata/ on.
			for ext, buf := range map[string]*bytes.Buffer{"txt": &text, "native": &native, "reorg": &reorg, "json": &json} {
				got := builtAt.ReplaceAllString(buf.String(), "$1")
				testutil.Golden(t, filepath.Join("testdata", "golden", "layout", fx+"."+ext), []byte(got))
			}
		})
	}
}
