package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
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
	bpftoolEnum = regexp.MustCompile(`(?m)^\t'(\w+)' val=(-?\d+)$`)
)

// TestFullDumpKernelBTF: the running kernel's whole BTF dump against
// pahole 1.24's. Every type that differs falls in a class where pahole
// is shown wrong:
//   - alignment (the blocks are the same but for __aligned__ attributes
//     and "forced alignments" lines): BTF records no alignment, and both
//     tools restore what GCC's DWARF would say. GCC gives DW_AT_alignment
//     to a struct with an aligned member and to a member of an aligned
//     type (TestBTFAlignmentAsGCC shows pahole's BTF guesses leave these
//     out where pahole's DWARF output has them); so each attribute only
//     we print must be one of those, and each only pahole prints must be
//     impossible (an alignment that does not divide the type's size);
//   - enumerators: pahole prints an enumerator of an enum BTF marks signed
//     as unsigned (2147483648); bpftool gives the negative value we print.
//
// Blocks with later pahole's notes of flexible arrays, which 1.24 does not
// print (TestFlexibleArrays), are compared as 1.24 would print them
// (as124). A name BTF gives several structs (elf_note_info, native and compat)
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
	aligned := typeAligns(got)
	count := map[string]int{}
	for _, d := range diffs {
		theirs, ours := d[0], d[1]
		norm := func(s string) string {
			return spaceRun.ReplaceAllString(forcedLine.ReplaceAllString(alignAttr.ReplaceAllString(s, ""), ""), " ")
		}
		if f, n := as124(ours); n > 0 {
			// Later pahole's notes of flexible arrays, which 1.24 does
			// not print (TestFlexibleArrays checks them).
			count["flexible array notes"]++
			if ours = f; theirs == ours {
				continue
			}
		}
		switch {
		case norm(theirs) == norm(ours):
			classes, err := alignDiffs(theirs, ours, aligned)
			if err != nil {
				t.Errorf("%v:\npahole:\n%sgopahole:\n%s", err, theirs, ours)
			}
			for _, c := range classes {
				count[c]++
			}
		case enumsAsBpftool(theirs, ours, signed):
			count["enumerators"]++
		default:
			t.Errorf("a difference of no known class:\npahole:\n%sgopahole:\n%s", theirs, ours)
		}
	}
	t.Logf("kernel BTF: %d types the same, %d differ; differing lines by class: %v; printed a different number of times: %v", same, len(diffs), count, unpaired)
	if n := count["not proven: pahole's alignment from the size"]; n > 1 {
		t.Errorf("%d types where pahole's alignment is not shown wrong, 1 was (tcf_mirred)", n)
	}
	if same < 9000 || count["enumerators"] < 10 {
		t.Errorf("only %d types the same (want 9000), %d enumerator differences (want 10)", same, count["enumerators"])
	}
}

var (
	flexibleNote  = regexp.MustCompile(`^\t*/\* XXX last struct has( a flexible array)?(,? embedded flexible array\(s\))?(,?)(.*)\*/$`)
	flexibleCount = regexp.MustCompile(`^\t*/\* flexible array members: [^*]*\*/$`)
)

// as124 is a dump as pahole 1.24 prints it: without later pahole's notes
// of flexible arrays ("XXX last struct has a flexible array, ...",
// "flexible array members: ..."), which TestFlexibleArrays checks. It
// reports how many lines it changed.
func as124(dump string) (string, int) {
	lines := strings.Split(dump, "\n")
	out := make([]string, 0, len(lines))
	changed := 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if flexibleCount.MatchString(l) {
			changed++
			continue
		}
		m := flexibleNote.FindStringSubmatch(l)
		if m == nil || m[1]+m[2] == "" {
			out = append(out, l)
			continue
		}
		changed++
		if rest := strings.TrimSpace(m[4]); rest != "" {
			out = append(out, strings.Replace(l, m[1]+m[2]+m[3], "", 1))
			continue
		}
		// A note of flexible arrays alone: the blank lines that open
		// and close the member's notes go too, unless another note
		// follows or the statistics' blank line is the closing one.
		next := ""
		if i+1 < len(lines) {
			next = lines[i+1]
		}
		if strings.HasPrefix(strings.TrimLeft(next, "\t"), "/* XXX") {
			continue
		}
		if len(out) > 0 && out[len(out)-1] == "" {
			out = out[:len(out)-1]
		}
		if next == "" && i+2 < len(lines) && !strings.Contains(lines[i+2], "/* size:") {
			i++
		}
	}
	return strings.Join(out, "\n"), changed
}

var (
	alignValue = regexp.MustCompile(` __attribute__\(\(__aligned__\((\d+)\)\)\)`)
	memberType = regexp.MustCompile(`^\t+(?:const )?((?:struct|union) \w+) `)
	typeSize   = regexp.MustCompile(`/\* size: (\d+),`)
	memberSize = regexp.MustCompile(`/\*\s+\d+\s+(\d+) \*/$`)
)

// typeAligns maps each struct and union of a dump ("struct name") to the
// alignment its closing line prints (0 for none).
func typeAligns(dump string) map[string]int {
	out := map[string]int{}
	for head, blocks := range dumpBlocks(dump) {
		lines := strings.Split(strings.TrimSuffix(blocks[0], "\n"), "\n")
		if m := alignValue.FindStringSubmatch(lines[len(lines)-1]); m != nil {
			out[strings.TrimSuffix(strings.TrimSpace(head), " {")], _ = strconv.Atoi(m[1])
		}
	}
	return out
}

// alignDiffs names the class of each line where pahole's block and ours
// print different alignment attributes, or says which line fits none:
//   - "gcc: struct with an aligned member": only we align a closing
//     line, of a struct or union with a member we print as aligned;
//   - "gcc: member of an aligned type": only we align a member, and its
//     struct or union type prints with that alignment;
//   - "gcc: anonymous member and its type": an anonymous struct member
//     where we print both the type's and the member's attribute, as pahole
//     prints GCC's DWARF of one;
//   - "pahole: alignment does not divide the size": pahole aligns a type
//     or member to N where its size is no multiple of N, which C forbids;
//   - "source: TestKernelAlignmentSources": a struct of alignSample,
//     whose source that test reads;
//   - "not proven": pahole's larger alignment of a struct whose size our
//     members' alignment explains too (at most one: struct tcf_mirred).
func alignDiffs(theirs, ours string, aligned map[string]int) ([]string, error) {
	keep := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, "forced alignments:") {
				out = append(out, l)
			}
		}
		return out
	}
	tl, ol := keep(theirs), keep(ours)
	if len(tl) != len(ol) {
		return nil, fmt.Errorf("the blocks differ in more than alignment")
	}
	var classes []string
	for i := range tl {
		ta, oa := alignValue.FindAllStringSubmatch(tl[i], -1), alignValue.FindAllStringSubmatch(ol[i], -1)
		if len(ta) == len(oa) && (len(ta) == 0 || ta[len(ta)-1][1] == oa[len(oa)-1][1]) {
			continue
		}
		c := alignClass(tl, ol, i, ta, oa, aligned)
		if c == "" {
			return nil, fmt.Errorf("line %d: an alignment difference of no known class: pahole %q, gopahole %q", i+1, tl[i], ol[i])
		}
		classes = append(classes, c)
	}
	return classes, nil
}

// alignClass is alignDiffs' class of line i.
func alignClass(tl, ol []string, i int, ta, oa [][]string, aligned map[string]int) string {
	last := func(m [][]string) int {
		if len(m) == 0 {
			return 0
		}
		n, _ := strconv.Atoi(m[len(m)-1][1])
		return n
	}
	theirs, ours := last(ta), last(oa)
	closing := strings.HasPrefix(strings.TrimLeft(ol[i], "\t"), "}")
	switch {
	case theirs > ours:
		size := 0
		if m := memberSize.FindStringSubmatch(ol[i]); m != nil {
			size, _ = strconv.Atoi(m[1])
		} else if closing && !strings.HasPrefix(ol[i], "\t") {
			if m := typeSize.FindStringSubmatch(strings.Join(ol, "\n")); m != nil {
				size, _ = strconv.Atoi(m[1])
			}
		}
		if size > 0 && size%theirs != 0 {
			return "pahole: alignment does not divide the size"
		}
		if closing && ours > 0 && !strings.HasPrefix(ol[i], "\t") {
			// A cacheline pahole guesses from the size where the
			// members' alignment (which pahole does not count) gives
			// that size: the source would tell (struct tcf_mirred).
			return "not proven: pahole's alignment from the size"
		}
	case len(ta) == 1 && len(oa) == 2 && theirs == ours && closing:
		return "gcc: anonymous member and its type"
	case closing && theirs < ours && alignSample[structName(ol)] != "":
		return "source: TestKernelAlignmentSources"
	case closing && hasAlignedMember(ol, i):
		return "gcc: struct with an aligned member"
	case !closing:
		if m := memberType.FindStringSubmatch(ol[i]); m != nil && aligned[m[1]] == ours {
			return "gcc: member of an aligned type"
		}
	}
	return ""
}

// structName is the name of the struct or union a block's first line
// opens.
func structName(lines []string) string {
	f := strings.Fields(lines[0])
	if len(f) < 3 {
		return ""
	}
	return f[1]
}

// hasAlignedMember reports whether the struct or union closing at line
// end of a block has a member (one level in) with an alignment attribute.
func hasAlignedMember(lines []string, end int) bool {
	depth := len(lines[end]) - len(strings.TrimLeft(lines[end], "\t"))
	open := 0
	for j := end - 1; j >= 0; j-- {
		d := len(lines[j]) - len(strings.TrimLeft(lines[j], "\t"))
		if d <= depth && strings.HasSuffix(lines[j], "{") {
			open = j
			break
		}
	}
	for j := open + 1; j < end; j++ {
		d := len(lines[j]) - len(strings.TrimLeft(lines[j], "\t"))
		if d == depth+1 && alignValue.MatchString(lines[j]) {
			return true
		}
	}
	return false
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
