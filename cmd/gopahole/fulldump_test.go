package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/loader"
)

// dumpBlocks splits a pahole-format dump into its top-level types (each
// up to its closing "}...;" line), by first line: a name printed twice
// has two blocks.
func dumpBlocks(s string) map[string][]string {
	out := map[string][]string{}
	start := 0
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "}") {
			b := strings.Join(lines[start:i+1], "")
			out[lines[start]] = append(out[lines[start]], b)
			start = i + 1
		}
	}
	return out
}

// dumpDiffs pairs pahole's blocks with ours by first line and returns the
// pairs that differ (theirs, ours) and the number of identical blocks.
func dumpDiffs(theirs, ours string) (diffs [][2]string, same int, unpaired []string) {
	tb, ob := dumpBlocks(theirs), dumpBlocks(ours)
	for head, ts := range tb {
		mine := ob[head]
		if len(mine) != len(ts) {
			unpaired = append(unpaired, strings.TrimSpace(head))
			continue
		}
		for i := range ts {
			if ts[i] == mine[i] {
				same++
			} else {
				diffs = append(diffs, [2]string{ts[i], mine[i]})
			}
		}
	}
	return diffs, same, unpaired
}

var atomicRow = regexp.MustCompile(`(?m)^\tatomic_\w+\s+(\w+);\s+/\*\s+(\d+)\s+(\d+) \*/$`)

// TestFullDumpPython: python3.11d's whole dump is pahole 1.24's but for
// the structs whose one member is an _Atomic typedef, which pahole sizes
// 0 (then "padding: 8" in an 8-byte struct); gdb's ptype /o gives each
// such member the size we print.
func TestFullDumpPython(t *testing.T) {
	if testing.Short() {
		t.Skip("reads all of python3.11d's DWARF twice")
	}
	bin := testutil.RealBinary(t, "python3.11d")
	want := paholeOut(t, bin)
	code, got, errs := run(bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	diffs, same, unpaired := dumpDiffs(want, got)
	if len(unpaired) > 0 {
		t.Errorf("types printed a different number of times: %v", unpaired)
	}
	if same < 200 {
		t.Errorf("only %d types the same as pahole's, want at least 200", same)
	}
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		testutil.Skipf(t, "gdb not installed: %v", err)
	}
	for _, d := range diffs {
		theirs, ours := atomicRow.FindStringSubmatch(d[0]), atomicRow.FindStringSubmatch(d[1])
		if theirs == nil || ours == nil || theirs[3] != "0" || theirs[1] != ours[1] {
			t.Errorf("a difference other than an _Atomic member pahole sizes 0:\npahole:\n%sgopahole:\n%s", d[0], d[1])
			continue
		}
		head := strings.TrimSuffix(strings.SplitN(d[1], "\n", 2)[0], " {")
		out, err := exec.Command(gdb, "-batch", "-ex", "ptype /o "+head, bin).Output()
		if err != nil {
			t.Fatalf("gdb ptype /o %s: %v", head, err)
		}
		if !regexp.MustCompile(`\|\s+` + ours[3] + ` \*/\s+atomic_\w+ ` + ours[1] + `;`).Match(out) {
			t.Errorf("gdb does not give %s.%s %s bytes:\n%s", head, ours[1], ours[3], out)
		}
	}
	if len(diffs) > 4 {
		t.Errorf("%d types differ, the _Atomic ones were 2", len(diffs))
	}
	t.Logf("python3.11d: %d types the same, %d with an _Atomic member pahole sizes 0 (gdb agrees with us)", same, len(diffs))
}

var (
	alignAttr   = regexp.MustCompile(` __attribute__\(\(__aligned__\(\d+\)\)\)`)
	forcedLine  = regexp.MustCompile(`\n\s*/\* forced alignments:[^\n]*\*/`)
	enumRow     = regexp.MustCompile(`(?m)^\t+(\w+)\s+= (-?\d+),?$`)
	spaceRun    = regexp.MustCompile(`\s+`)
	constAnon   = regexp.MustCompile(`(?s)\tconst (struct|union) \{\n.*?\n\t\}; /\*`)
	bpftoolEnum = regexp.MustCompile(`(?m)^\t'(\w+)' val=(-?\d+)$`)
)

// TestFullDumpKernelBTF: the running kernel's whole BTF dump against
// pahole 1.24's. Every type that differs falls in one of three classes:
//   - alignment: the blocks are the same but for __aligned__ attributes,
//     "forced alignments" lines and the columns those move (BTF records no
//     alignment; both tools guess, each by its own rule);
//   - enumerators: pahole prints an enumerator of an enum BTF marks signed
//     as unsigned (2147483648); bpftool gives the negative value we print;
//   - a const anonymous struct or union, which pahole prints as a type of
//     its own (its statistics inside, other columns) and gopahole as any
//     other anonymous member.
//
// A name BTF gives several structs (elf_note_info, native and compat)
// pahole prints once; gopahole prints each, as bpftool lists them.
func TestFullDumpKernelBTF(t *testing.T) {
	if _, err := os.Stat(loader.KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	want := paholeOut(t)
	code, got, errs := run()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	diffs, same, unpaired := dumpDiffs(want, got)
	bpftool := tool(t, "bpftool", "btf", "dump", "file", loader.KernelBTF)
	ob := dumpBlocks(got)
	for _, head := range unpaired {
		// pahole prints one type of a name BTF has several of.
		kind, name, _ := strings.Cut(strings.TrimSuffix(head, " {"), " ")
		n := strings.Count(bpftool, strings.ToUpper(kind)+" '"+name+"' ")
		if n < 2 || len(ob[head+"\n"]) != n {
			t.Errorf("%s: gopahole prints %d, bpftool lists %d", head, len(ob[head+"\n"]), n)
		}
	}
	signed := map[string]string{}
	for _, m := range bpftoolEnum.FindAllStringSubmatch(bpftool, -1) {
		signed[m[1]] = m[2]
	}
	count := map[string]int{}
	for _, d := range diffs {
		theirs, ours := d[0], d[1]
		norm := func(s string) string {
			return spaceRun.ReplaceAllString(forcedLine.ReplaceAllString(alignAttr.ReplaceAllString(s, ""), ""), " ")
		}
		switch {
		case norm(theirs) == norm(ours):
			count["alignment"]++
		case enumsAsBpftool(theirs, ours, signed):
			count["enumerators"]++
		case constAnon.MatchString(theirs):
			count["const anonymous"]++
		default:
			t.Errorf("a difference of no known class:\npahole:\n%sgopahole:\n%s", theirs, ours)
		}
	}
	t.Logf("kernel BTF: %d types the same; differing: %v; printed a different number of times: %v", same, count, unpaired)
	if same < 9000 || count["enumerators"] < 10 {
		t.Errorf("only %d types the same (want 9000), %d enumerator differences (want 10)", same, count["enumerators"])
	}
}

// enumsAsBpftool reports whether theirs and ours differ only in
// enumerator values, each of ours being bpftool's and each of theirs
// the unsigned reading of it.
func enumsAsBpftool(theirs, ours string, bpftool map[string]string) bool {
	tr, or := enumRow.FindAllStringSubmatch(theirs, -1), enumRow.FindAllStringSubmatch(ours, -1)
	if len(tr) == 0 || len(tr) != len(or) {
		return false
	}
	if spaceRun.ReplaceAllString(enumRow.ReplaceAllString(theirs, ""), " ") != spaceRun.ReplaceAllString(enumRow.ReplaceAllString(ours, ""), " ") {
		return false
	}
	for i := range tr {
		if tr[i][1] != or[i][1] || bpftool[or[i][1]] != or[i][2] {
			return false
		}
	}
	return true
}
