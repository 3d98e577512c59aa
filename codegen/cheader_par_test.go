package codegen

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// serialHeader is the header made in one pass, each body written where
// the walk reaches it: what deferred bodies must reproduce byte for byte.
func serialHeader(t *testing.T, roots []types.Type) string {
	t.Helper()
	o := HeaderOptions{Source: "x"}
	hw := &HeaderWriter{h: newHeader(&o, len(roots), false), o: o}
	for _, r := range roots {
		if err := hw.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := hw.Finish(&b); err != nil {
		t.Fatal(err)
	}
	if len(hw.h.jobs) != 0 {
		t.Fatalf("serial header deferred %d bodies", len(hw.h.jobs))
	}
	return b.String()
}

// parallelHeader is the header WriteHeader makes, with the number of
// bodies it deferred and whether it had to make the header again.
func parallelHeader(t *testing.T, roots []types.Type) (string, int, bool) {
	t.Helper()
	hw := NewHeaderWriter(&HeaderOptions{Source: "x"}, len(roots))
	for _, r := range roots {
		if err := hw.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	jobs := len(hw.h.jobs)
	var b bytes.Buffer
	if _, err := hw.Finish(&b); err != nil {
		t.Fatal(err)
	}
	return b.String(), jobs, hw.h.bad
}

// TestDeferredBodiesRealBinaries: on the kernel's BTF, python3.11d and
// libstdc++ (C++ bases flattened, anonymous enums, typedefs of anonymous
// structs whose padding names follow the last struct's), the header with
// bodies rendered apart and in parallel is the one-pass header, byte for
// byte.
func TestDeferredBodiesRealBinaries(t *testing.T) {
	load := map[string]func(t *testing.T) (*types.Spec, error){
		"kernel": func(t *testing.T) (*types.Spec, error) {
			if _, err := os.Stat(btf.KernelBTF); err != nil {
				testutil.Skipf(t, "no kernel BTF: %v", err)
			}
			return btf.Load(btf.KernelBTF, nil)
		},
		"python3.11d": func(t *testing.T) (*types.Spec, error) {
			return dwarf.Load(testutil.RealBinary(t, "python3.11d"), nil)
		},
		"libstdc++": func(t *testing.T) (*types.Spec, error) {
			return dwarf.Load(testutil.RealBinary(t, "libstdc++"), nil)
		},
	}
	for name, ld := range load {
		t.Run(name, func(t *testing.T) {
			spec, err := ld(t)
			if err != nil {
				t.Fatal(err)
			}
			var roots []types.Type
			for _, ty := range spec.Types() {
				switch v := ty.(type) {
				case *types.Struct:
					roots = append(roots, v)
				case *types.Typedef:
					if s, ok := types.Resolve(v).(*types.Struct); ok && s.Name == "" {
						roots = append(roots, v)
					}
				}
			}
			want := serialHeader(t, roots)
			got, jobs, again := parallelHeader(t, roots)
			if jobs < 200 {
				t.Errorf("%d bodies deferred of %d roots", jobs, len(roots))
			}
			if again {
				t.Errorf("header made again")
			}
			if got != want {
				t.Errorf("headers differ at byte %d: %q", diffAt(got, want), want[max(0, diffAt(got, want)-200):min(len(want), diffAt(got, want)+200)])
			}
		})
	}
}

func diffAt(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestDeferredBodyNeedsWalk: a C++ class whose base's tail padding holds
// the next member gets the base's members, among them an anonymous enum,
// whose enumerators only the walk may name: the header is made again in
// one pass and equals it.
func TestDeferredBodyNeedsWalk(t *testing.T) {
	u8 := &types.Base{Name: "unsigned char", ByteSize: 1, Encoding: types.Unsigned}
	i32 := &types.Base{Name: "int", ByteSize: 4, Encoding: types.Signed}
	anon := &types.Enum{ByteSize: 1, Lang: types.LangCPlusPlus, Values: []types.EnumValue{{Name: "red", Value: 0}, {Name: "blue", Value: 1}}}
	base := &types.Struct{Kind: types.KindStruct, Name: "Base", ByteSize: 8, Lang: types.LangCPlusPlus, Members: []types.Member{
		{Name: "x", Type: i32, Offset: 0}, {Name: "color", Type: anon, Offset: 32}}}
	derived := &types.Struct{Kind: types.KindStruct, Name: "Derived", ByteSize: 8, Lang: types.LangCPlusPlus, Members: []types.Member{
		{Type: base, Offset: 0, Embedded: true}, {Name: "extra", Type: u8, Offset: 40}}}
	roots := []types.Type{derived, base}
	want := serialHeader(t, roots)
	got, jobs, again := parallelHeader(t, roots)
	if jobs == 0 || !again {
		t.Errorf("%d bodies deferred, made again %v: want some, true", jobs, again)
	}
	if got != want {
		t.Errorf("header:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(got, "Derived__red") && !strings.Contains(got, "red = 0") {
		t.Errorf("no enumerator in:\n%s", got)
	}
}
