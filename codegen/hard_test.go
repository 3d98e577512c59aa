package codegen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/types"
)

// TestHeaderHardCases: the shapes real programs have that C spells only with
// care compile with clang -target bpf and keep every _Static_assert.
func TestHeaderHardCases(t *testing.T) {
	i32 := &types.Base{Name: "int", ByteSize: 4, Encoding: types.Signed}
	i16 := &types.Base{Name: "short", ByteSize: 2, Encoding: types.Signed}
	u8 := &types.Base{Name: "u8", ByteSize: 1, Encoding: types.UnsignedChar}
	char := &types.Base{Name: "char", ByteSize: 1, Encoding: types.Char}
	unit := &types.Base{Name: "()", ByteSize: 0}
	nullptr := &types.Base{Name: "decltype(nullptr)", ByteSize: 0}
	ld := &types.Base{Name: "long double", ByteSize: 16, Encoding: types.Float}
	f80 := &types.Base{Name: "f80", ByteSize: 10, Encoding: types.Float}
	ptr := func(t types.Type) *types.Pointer { return &types.Pointer{Target: t, ByteSize: 8} }
	flex := &types.Array{Elem: char, Count: -1}
	bits := func(b int64) types.Bits { return types.Bits(b * 8) }
	roots := []types.Type{
		// struct flex { int n; short k; char data[]; }: nothing after data.
		&types.Struct{Name: "flex", ByteSize: 8, Lang: types.LangC, Members: []types.Member{
			{Name: "n", Type: i32}, {Name: "k", Type: i16, Offset: bits(4)}, {Name: "data", Type: flex, Offset: bits(6)}}},
		// Padding C's rounding does not give: a zero-length array then.
		&types.Struct{Name: "flex_padded", ByteSize: 12, Lang: types.LangC, Members: []types.Member{
			{Name: "n", Type: i32}, {Name: "k", Type: i16, Offset: bits(4)}, {Name: "data", Type: flex, Offset: bits(6)}}},
		// Rust's AtomicPtr<()>, a vtable's drop_in_place, C++'s nullptr_t&.
		&types.Struct{Name: "core::sync::atomic::AtomicPtr<()>", ByteSize: 24, Lang: types.LangRust, Members: []types.Member{
			{Name: "p", Type: ptr(unit)},
			{Name: "drop_in_place", Type: ptr(&types.FuncProto{Params: []types.FuncParam{{Type: ptr(unit)}}, Return: unit}), Offset: bits(8)},
			{Name: "r", Type: &types.Pointer{Target: &types.Typedef{Name: "std::nullptr_t", Target: nullptr}, ByteSize: 8, Ref: 1}, Offset: bits(16)}}},
		// Go's []func() is named like C's predefined __func__.
		&types.Struct{Name: "[]func()", ByteSize: 24, Lang: types.LangGo, GoKind: types.GoSlice, Members: []types.Member{
			{Name: "array", Type: ptr(ptr(unit))}, {Name: "len", Type: &types.Base{Name: "int", ByteSize: 8, Encoding: types.Signed}, Offset: bits(8)},
			{Name: "cap", Type: &types.Base{Name: "int", ByteSize: 8, Encoding: types.Signed}, Offset: bits(16)}}},
		// glibc's printf_arg: long double is 8 bytes under -target bpf.
		&types.Struct{Name: "printf_arg", Kind: types.KindUnion, ByteSize: 16, Lang: types.LangC, Members: []types.Member{
			{Name: "pa_int", Type: i32}, {Name: "pa_long_double", Type: ld}}},
		// Zig's Complex(f80): 10-byte floats 16 apart.
		&types.Struct{Name: "Complex(f80)", ByteSize: 32, Lang: types.LangZig, Members: []types.Member{
			{Name: "real", Type: f80}, {Name: "imag", Type: f80, Offset: bits(16)}}},
		// A C++ base declared only (std::exception lives in libstdc++).
		&types.Struct{Name: "my::error", ByteSize: 16, Lang: types.LangCPlusPlus, Members: []types.Member{
			{Name: "std::exception", Type: &types.Struct{Name: "std::exception", Incomplete: true, Lang: types.LangCPlusPlus}, Embedded: true},
			{Name: "code", Type: i32, Offset: bits(8)}}},
		// Rust's ArcInner<[u8]>: the unsized tail starts at the end.
		&types.Struct{Name: "alloc::sync::ArcInner<[u8]>", ByteSize: 16, Lang: types.LangRust, Members: []types.Member{
			{Name: "strong", Type: &types.Base{Name: "usize", ByteSize: 8}}, {Name: "weak", Type: &types.Base{Name: "usize", ByteSize: 8}, Offset: bits(8)},
			{Name: "data", Type: u8, Offset: bits(16)}}},
		// Enums whose values do not make their size in C.
		&types.Struct{Name: "sized_enums", ByteSize: 16, Lang: types.LangZig, Members: []types.Member{
			{Name: "e2", Type: &types.Enum{Name: "elf.ET", ByteSize: 2, Values: []types.EnumValue{{Name: "NONE"}, {Name: "CORE", Value: 4}}, Lang: types.LangZig}},
			{Name: "e8", Type: &types.Enum{Name: "lock", ByteSize: 8, Values: []types.EnumValue{{Name: "Unlocked"}, {Name: "Locked", Value: 1}}, Lang: types.LangZig}, Offset: bits(8)}}},
	}
	var h bytes.Buffer
	if _, err := codegen.WriteHeader(&h, roots, &codegen.HeaderOptions{Source: "hard"}); err != nil {
		t.Fatal(err)
	}
	out := h.String()
	for _, bad := range []string{"*p[0]", "struct __func__ ", "\tlong double", "data[];\n\tunsigned char"} {
		if strings.Contains(out, bad) {
			t.Errorf("header holds %q", bad)
		}
	}
	if !strings.Contains(out, "char data[];\n}") {
		t.Errorf("struct flex does not end with its flexible array")
	}
	if t.Failed() {
		t.Log(out)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hard.h"), h.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	compileBPF(t, dir, "#include \"hard.h\"\n")
}

// TestHeaderOverlap: a member that overlaps the one before it (debug info
// no C struct can spell) is left out with a comment where it would be, not
// silently; the rest keeps its asserts and compiles.
func TestHeaderOverlap(t *testing.T) {
	i32 := &types.Base{Name: "int", ByteSize: 4, Encoding: types.Signed}
	i64 := &types.Base{Name: "long", ByteSize: 8, Encoding: types.Signed}
	s := &types.Struct{Name: "overlapping", ByteSize: 16, Lang: types.LangC, Members: []types.Member{
		{Name: "a", Type: i64}, {Name: "b", Type: i32, Offset: 32}, {Name: "c", Type: i32, Offset: 64}}}
	var h bytes.Buffer
	if _, err := codegen.WriteHeader(&h, []types.Type{s}, &codegen.HeaderOptions{Source: "overlap"}); err != nil {
		t.Fatal(err)
	}
	out := h.String()
	if !strings.Contains(out, "/* left out: int b at bit 32 overlaps the member before it */") {
		t.Errorf("no comment for the overlapping member b:\n%s", out)
	}
	if !strings.Contains(out, "\tint c;") || !strings.Contains(out, "overlapping, c) == 8") {
		t.Errorf("member c or its assert missing:\n%s", out)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "overlap.h"), h.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	compileBPF(t, dir, "#include \"overlap.h\"\n")
}
