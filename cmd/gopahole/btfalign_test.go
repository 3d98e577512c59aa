package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// alignSrc has the kernel's ways of aligning, one struct each: the
// attribute on a member only (raw_hashinfo's ht ____cacheline_aligned),
// on the struct and a member (packet_rollover), on the struct only
// (fpstate, bitmap_ipmac_elem's __aligned(__alignof__(u64)), nft_set_ext's
// __aligned(BITS_PER_LONG / 8), bpf_prog_stats' __aligned(2 *
// sizeof(u64))), __aligned(8) after a 4-byte hole (neighbour's ha), a
// member of an aligned struct type (socket's wq), an array and a
// flexible array of one, a union holding one, a struct holding a struct
// that holds one, two members of one aligned type side by side
// (hugetlb_cgroup's page_counters), anonymous padding bitfields (int :32,
// __kernel_timex: 56 bytes, which no alignment past 8 divides) and a
// flexible array of pointers (async_cow).
const alignSrc = `typedef unsigned long long u64;
struct cl { long x; } __attribute__((aligned(64)));
struct member_only { long n; long ht[4] __attribute__((aligned(64))); } g1;
struct both { int a; int hist[8] __attribute__((aligned(64))); } __attribute__((aligned(64))) g2;
struct type_only { long a; long b; } __attribute__((aligned(64))) g3;
struct elem { unsigned char ether[6]; unsigned char filled; } __attribute__((aligned(8))) g4;
struct ext { unsigned char genmask; unsigned char offset[8]; char data[]; } __attribute__((aligned(8))) g5;
struct stats { u64 cnt; u64 nsecs; u64 misses; } __attribute__((aligned(16))) g6;
struct neigh { long l; int s; int t; char lock[8]; int u; unsigned char ha[32] __attribute__((aligned(8))); } g7;
struct sock { int state; short type; struct cl wq; } g8;
struct arr { char c; struct cl a[2]; } g9;
struct flex { int n; struct cl f[]; } g10;
union un { char c; struct cl x; } g11;
struct holds { char c; union un u; } g12;
struct nest { char c; struct sock s; } g13;
struct pair { int id; struct cl one[2]; struct cl two[2]; } g14;
struct timexish { long a; int b; int :32; int :32; int :32; int :32; int :32; int :32; int :32; int :32; int :32; int :32; int :32; } g15;
struct cow { int n; struct sock *chunks[]; } g16;
`

// TestBTFAlignmentAsGCC: BTF records no alignment, so the alignment
// attributes gopahole prints from BTF are inferred (btf.inferAlign). The
// oracle is GCC's own record of them: DWARF's DW_AT_alignment, which
// pahole and gopahole print from the DWARF. For each struct of alignSrc,
// compiled with gcc -g and encoded with pahole -J, gopahole prints from
// the BTF what pahole prints from the DWARF. pahole's own BTF guesses
// are wrong on most of them (logged; at least 8 must be, 10 were).
func TestBTFAlignmentAsGCC(t *testing.T) {
	dir := t.TempDir()
	obj := compileObj(t, dir, "align", alignSrc)
	btfObj := filepath.Join(dir, "align.btf.o")
	tool(t, "cp", obj, btfObj)
	tool(t, "pahole", "-J", btfObj)
	gcc := dumpBlocks(paholeOut(t, "--suppress_force_paddings", "-F", "dwarf", obj))
	theirs := dumpBlocks(paholeOut(t, "-F", "btf", btfObj))
	code, out, errs := run("-F", "btf", btfObj)
	if code != 0 {
		t.Fatalf("gopahole -F btf: exit %d %s", code, errs)
	}
	ours := dumpBlocks(out)
	var wrong []string
	for head, want := range gcc {
		if !strings.HasPrefix(head, "struct") && !strings.HasPrefix(head, "union") {
			continue
		}
		name := strings.TrimSuffix(strings.TrimSpace(head), " {")
		if got := ours[head]; len(got) != 1 || got[0] != want[0] {
			t.Errorf("%s: gopahole -F btf is not pahole -F dwarf:\n%s\npahole -F dwarf (GCC's DW_AT_alignment):\n%s", name, strings.Join(got, ""), want[0])
		}
		if p := theirs[head]; len(p) != 1 || p[0] != want[0] {
			wrong = append(wrong, name)
		}
	}
	if len(gcc) < 17 {
		t.Errorf("only %d types in pahole's DWARF dump", len(gcc))
	}
	t.Logf("pahole -F btf differs from GCC's DWARF on %d types: %v", len(wrong), wrong)
	if len(wrong) < 8 {
		t.Errorf("pahole's BTF guesses match GCC's DWARF on all but %d types: %v", len(wrong), wrong)
	}
}

// constAnonSrc has const anonymous structs as the kernel's struct
// vm_fault opens with one: unnamed at the start, unnamed after other
// members, and named inside an anonymous struct.
const constAnonSrc = `struct vmf { const struct { void *vma; unsigned gfp; long pgoff; }; int flags; struct { int a; const struct { char x; long y; } in; } nest; } g;
struct vmf2 { long pad[9]; const struct { void *vma; unsigned gfp; long pgoff; }; int flags; } g2;
`

// TestConstAnonymousStruct: pahole prints a const anonymous struct as a
// type of its own (its statistics inside, the "const " taken from its
// type column, "};" then its offset); gopahole prints it so, from DWARF
// and from BTF, but for one thing pahole gets wrong: a named one loses
// its name ("}; /* 40 16 */" where gdb's ptype /o has "} in;").
func TestConstAnonymousStruct(t *testing.T) {
	dir := t.TempDir()
	obj := compileObj(t, dir, "constanon", constAnonSrc)
	want := paholeOut(t, obj)
	if strings.Contains(want, "} in;") || !strings.Contains(want, "\t\t}; /*    40    16 */") {
		t.Fatalf("pahole no longer drops the member's name:\n%s", want)
	}
	gdb := tool(t, "gdb", "-batch", "-ex", "ptype /o struct vmf", obj)
	if !strings.Contains(gdb, "} in;") {
		t.Fatalf("gdb's ptype /o has no member in:\n%s", gdb)
	}
	want = strings.Replace(want, "\t\t}; /*    40    16 */", "\t\t} in; /*    40    16 */", 1)
	code, got, errs := run(obj)
	if code != 0 || got != want {
		t.Errorf("exit %d %s\ngopahole:\n%s\npahole, with the name gdb gives:\n%s", code, errs, got, want)
	}
	btfObj := filepath.Join(dir, "constanon.btf.o")
	tool(t, "cp", obj, btfObj)
	tool(t, "pahole", "-J", btfObj)
	if code, got, errs := run("-F", "btf", btfObj); code != 0 || got != want {
		t.Errorf("-F btf: exit %d %s\ngopahole:\n%s\nwant:\n%s", code, errs, got, want)
	}
}
