package dwarf

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/cache"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// TestSplitIndexEqualsReaderIndex: the type index built on two cores
// (each half of the units on one, joined) is the index built in one pass
// over debug/dwarf's Reader. glibc, libstdc++ and cmd/go are large enough
// to be split; the small inputs take one pass.
func TestSplitIndexEqualsReaderIndex(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		split, err := f.index()
		if err != nil {
			t.Fatal(err)
		}
		sameIndex(t, split, readerIndex(t, f), min)
	})
}

// TestRawKeysEqualDecoded: each named type's dedup key read from the DIEs'
// bytes (rawAttrs) is the key of the same DIEs decoded by debug/dwarf.
func TestRawKeysEqualDecoded(t *testing.T) {
	eachScanInput(t, func(t *testing.T, f *File, min int) {
		lazy, eager := bothIndexes(t, f)
		raw, decoded := newConverter(f, lazy, 0), newConverter(f, eager, 0)
		decoded.keyOracle = entryKeyAttrs
		n, fromBytes := 0, 0
		for i, ln := range lazy.named {
			var a keyAttrs
			if raw.rawAttrs(ln, &a) {
				fromBytes++
			}
			gk, err := raw.dedupKey(nil, ln)
			if err != nil {
				t.Fatal(err)
			}
			wk, err := decoded.dedupKey(nil, eager.named[i])
			if err != nil {
				t.Fatal(err)
			}
			got, want := string(gk), string(wk)
			if got != want {
				t.Fatalf("named %#x: key from the bytes\n%s\nfrom debug/dwarf\n%s", ln.off, got, want)
			}
			n++
		}
		if n < min/100 || fromBytes < n {
			t.Errorf("%d keys compared, %d read from the bytes: want at least %d, all of them from the bytes", n, fromBytes, min/100)
		}
	})
}

// TestLookupStopsEarly: -C link_map on glibc's debug file (zlib-compressed
// sections; link_map is defined in the first unit) inflates only the start
// of .debug_info and gives the types the full read gives, as gopahole
// prints them. Every name of a sample, some defined in late units, does
// too.
func TestLookupStopsEarly(t *testing.T) {
	path := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	full, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"link_map"}
	step := max(len(full.Types())/40, 1)
	for i, ty := range full.Types() {
		if i%step == 0 && ty.TypeName() != "" {
			names = append(names, ty.TypeName())
		}
	}
	if len(names) < 20 {
		t.Fatalf("%d names sampled, want 20", len(names))
	}
	early := 0
	for _, name := range names {
		ef, err := elfx.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sec := ef.Section(".debug_info")
		if sec == nil || sec.Flags&elf.SHF_COMPRESSED == 0 {
			t.Fatalf("%s: .debug_info is not compressed", path)
		}
		spec, ok := namedPrefix(ef, ef, []string{name}, nil, nil)
		info, err := ef.LazySection(".debug_info")
		if err != nil {
			t.Fatal(err)
		}
		read := info.Read()
		ef.Close()
		if !ok {
			if name == "link_map" {
				t.Fatalf("link_map: the lookup read the whole file")
			}
			continue
		}
		if read < info.Size() {
			early++
		}
		if name == "link_map" && read > info.Size()/10 {
			t.Errorf("link_map: %d of %d bytes of .debug_info inflated", read, info.Size())
		}
		want := readWhole(t, path, name)
		got, w := printSpec(spec), printSpec(want)
		if got != w || got == "" {
			t.Errorf("%s: read in part\n%s\nread whole\n%s", name, got, w)
		}
		if name == "link_map" && (!strings.Contains(got, "declared at ") || strings.Contains(got, "declared at :")) {
			t.Errorf("link_map: no declaring file:\n%s", got)
		}
	}
	t.Logf("%d of %d lookups stopped early", early, len(names))
	if early < len(names)/2 {
		t.Errorf("%d of %d lookups stopped early", early, len(names))
	}
}

// TestLookupStopsEarlyCached: LoadNamed of link_map on glibc's debug
// file with the index cache on, where the sections begin inflating ahead
// into a new entry before the prefix answers, gives the types the full
// read gives, and leaves no entry begun in the cache (dropped, or whole).
func TestLookupStopsEarlyCached(t *testing.T) {
	path := testutil.DebugFile(testutil.RealBinary(t, "libc"))
	dir := t.TempDir()
	t.Setenv(cache.Env, dir)
	spec, err := LoadNamed(path, []string{"link_map"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := printSpec(spec), printSpec(readWhole(t, path, "link_map")); got != want || got == "" {
		t.Errorf("link_map: looked up\n%s\nread whole\n%s", got, want)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp") {
			t.Errorf("%s: an entry begun left in the cache", p)
		}
		return nil
	})
}

// readWhole looks name up over the whole of .debug_info (as LoadNamed
// did before reading in part): the first unit whose top level defines
// it, found by debug/dwarf's Reader (scanUnit), indexed and converted
// alone.
func readWhole(t *testing.T, path, name string) *types.Spec {
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	units, err := f.unitEntries()
	if err != nil || len(units) == 0 {
		t.Fatalf("%s: no units (%v)", name, err)
	}
	found := []int{-1}
	r := f.oracle().Reader()
	for u := range units {
		if scanUnit(r, units[u], []string{name})[0] {
			found[0] = u
			break
		}
	}
	if found[0] < 0 {
		t.Fatalf("%s: in no unit's top level", name)
	}
	spec, ok, err := f.namedSpec(units, found, []string{name})
	if err != nil || !ok {
		t.Fatalf("%s: the whole read cannot answer (%v)", name, err)
	}
	return spec
}

// scanUnit reports which names a unit's top level defines.
func scanUnit(r *dwarf.Reader, u unitSpan, names []string) []bool {
	hits := make([]bool, len(names))
	r.Seek(dwarf.Offset(u.entry.Offset))
	if _, err := r.Next(); err != nil || !u.entry.Children {
		return hits
	}
	var scopes []string
	scope := ""
	for {
		e, err := r.Next()
		if err != nil || e == nil || (u.end != 0 && Offset(e.Offset) >= u.end && e.Tag != 0) {
			return hits
		}
		if e.Tag == 0 {
			if len(scopes) == 0 {
				return hits
			}
			scope, scopes = scopes[len(scopes)-1], scopes[:len(scopes)-1]
			continue
		}
		if Tag(e.Tag) == TagNamespace || Tag(e.Tag) == TagModule {
			if e.Children {
				scopes = append(scopes, scope)
				name := readerStr(e, AttrName)
				if name == "" {
					name = "(anonymous namespace)"
				}
				scope += name + "::"
			}
			continue
		}
		if isTypeTag(Tag(e.Tag)) {
			if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); !decl {
				if name := readerStr(e, AttrName); name != "" {
					q := scope + name
					for i, want := range names {
						hits[i] = hits[i] || q == want
					}
				}
			}
		}
		if e.Children {
			r.SkipChildren()
		}
	}
}

// printSpec lists the spec's types, each with its size, where it was
// declared (the file from the unit's line program) and its members.
func printSpec(s *types.Spec) string {
	var b bytes.Buffer
	for _, ty := range s.Types() {
		fmt.Fprintf(&b, "%T %s", ty, ty.TypeName())
		if td, ok := ty.(*types.Typedef); ok && td.Target != nil {
			ty = td.Target
			fmt.Fprintf(&b, " = %T %s", ty, ty.TypeName())
		}
		if st, ok := ty.(*types.Struct); ok {
			fmt.Fprintf(&b, " %d bytes, declared at %s:%d", st.ByteSize, st.Decl.File, st.Decl.Line)
			for _, m := range st.Members {
				fmt.Fprintf(&b, " %s@%d:%s", m.Name, m.Offset, m.Type.TypeName())
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// clangLayouts builds the c-layouts fixture's source with clang's DWARF 5,
// whose names are DW_FORM_strx1 (indexes into .debug_str_offsets), as
// readelf says.
func clangLayouts(t *testing.T) string {
	if _, err := exec.LookPath("clang"); err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	out := filepath.Join(t.TempDir(), "c-layouts-clang")
	src := filepath.Join("..", "testdata", "fixtures", "c-layouts", "layouts.c")
	if msg, err := exec.Command("clang", "-g", "-gdwarf-5", "-O0", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, msg)
	}
	abbrev, err := exec.Command("readelf", "--debug-dump=abbrev", out).Output()
	if err != nil || !bytes.Contains(abbrev, []byte("DW_AT_name         DW_FORM_strx")) {
		t.Fatalf("readelf finds no name by DW_FORM_strx in clang's output (%v):\n%.2000s", err, abbrev)
	}
	return out
}

// TestLookupClang: on clang's DWARF 5, every struct a lookup can find is
// found reading the units in part, as the whole read finds it.
func TestLookupClang(t *testing.T) {
	path := clangLayouts(t)
	full, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ty := range full.Types() {
		if _, ok := ty.(*types.Struct); !ok || ty.TypeName() == "" {
			continue
		}
		ef, err := elfx.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		spec, ok := namedPrefix(ef, ef, []string{ty.TypeName()}, nil, nil)
		ef.Close()
		if !ok {
			t.Fatalf("%s: the lookup read the whole file", ty.TypeName())
		}
		if got, want := printSpec(spec), printSpec(readWhole(t, path, ty.TypeName())); got != want || got == "" {
			t.Errorf("%s: read in part\n%s\nread whole\n%s", ty.TypeName(), got, want)
		}
		n++
	}
	if n < 10 {
		t.Errorf("%d structs looked up, want 10", n)
	}
}
