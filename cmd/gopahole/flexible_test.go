package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// flexSrc has structs ending in a flexible array (F, and Z's older [0]),
// structs holding one in the middle (M), at the end (E), and holding a
// struct that holds one (N), and structs with none (T, U).
const flexSrc = `struct F { int n; char d[]; };
struct Z { long n; int d[0]; };
struct M { struct F f; int after; };
struct E { int a; struct Z z; };
struct N { long x; struct M m; struct F tail; };
struct T { int x; char y[4]; };
struct U { struct T t; int n; };
struct M gm; struct E ge; struct N gn; struct U gu;
`

var (
	clangVariable = regexp.MustCompile(`variable sized type 'struct (\w+)'`)
	flexNote      = regexp.MustCompile(`(?m)^\t\S.* (\w+);\s+/\*.*\*/\n\n\t/\* XXX last struct has([^*]*)\*/`)
)

// TestFlexibleArrays: a member whose struct ends in a flexible array, or
// holds one that does, gets later pahole's note ("XXX last struct has a
// flexible array", "embedded flexible array(s)") and its struct the
// count ("flexible array members: end: N, middle: M");
// --with_embedded_flexible_array lists the structs holding one. The
// oracles: pahole 1.24's --with_flexible_array for the structs that end
// in one, clang for the structs of variable size (it warns of a member of
// one that is not last: each struct is put in a probe struct of its own;
// it does not count a zero-length array, pahole does).
func TestFlexibleArrays(t *testing.T) {
	dir := t.TempDir()
	obj := compileObj(t, dir, "flex", flexSrc)
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	probe := flexSrc
	for _, s := range []string{"F", "Z", "M", "E", "N", "T", "U"} {
		probe += fmt.Sprintf("struct probe_%s { struct %s s; int after; };\n", s, s)
	}
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(clang, "-fsyntax-only", "-Wgnu-variable-sized-type-not-at-end", src).CombinedOutput()
	variable := map[string]bool{}
	for _, m := range clangVariable.FindAllStringSubmatch(string(out), -1) {
		variable[m[1]] = true
	}
	ends := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(paholeOut(t, "--with_flexible_array", "-s", obj)), "\n") {
		ends[strings.Fields(l)[0]] = true
	}
	if len(variable) != 3 || len(ends) != 2 {
		t.Fatalf("clang's variable-sized structs %v, pahole's ending in a flexible array %v", variable, ends)
	}
	// clang counts no zero-length array (Z's d[0]) as flexible, pahole
	// does: a struct ending in one, or holding one that does, is too.
	for s := range ends {
		variable[s] = true
	}
	for changed := true; changed; {
		changed = false
		for _, s := range []string{"F", "Z", "M", "E", "N", "T", "U"} {
			if !variable[s] && slices.ContainsFunc(structMembers(t, flexSrc, s), func(m [2]string) bool { return variable[m[0]] }) {
				variable[s], changed = true, true
			}
		}
	}
	code, dump, errs := run(obj)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var holders []string
	for name, blocks := range dumpBlocks(dump) {
		s := strings.Fields(name)[1]
		want, end, middle := "", 0, 0
		holds := false
		for _, m := range structMembers(t, flexSrc, s) {
			note := ""
			if ends[m[0]] {
				note, end = " a flexible array", end+1
			}
			if variable[m[0]] && slices.ContainsFunc(structMembers(t, flexSrc, m[0]), func(in [2]string) bool { return variable[in[0]] }) {
				note, middle = note+sep(note)+" embedded flexible array(s)", middle+1
			}
			if note != "" {
				want += m[1] + ":" + note + ";"
			}
			holds = holds || variable[m[0]]
		}
		if holds {
			holders = append(holders, s)
		}
		got := ""
		for _, m := range flexNote.FindAllStringSubmatch(blocks[0], -1) {
			got += m[1] + ":" + strings.TrimSuffix(m[2], " ") + ";"
		}
		if got != want || (end+middle > 0) != strings.Contains(blocks[0], "flexible array members: "+counts(end, middle)+" */") {
			t.Errorf("struct %s: notes %q, want %q (end %d, middle %d):\n%s", s, got, want, end, middle, blocks[0])
		}
	}
	slices.Sort(holders)
	code, rows, _ := run("--with_embedded_flexible_array", "-s", obj)
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(rows), "\n") {
		listed = append(listed, strings.Fields(l)[0])
	}
	slices.Sort(listed)
	if code != 0 || !slices.Equal(listed, holders) || len(holders) != 3 {
		t.Errorf("--with_embedded_flexible_array: exit %d, %v, want the structs holding a variable-sized one %v", code, listed, holders)
	}
}

// structMembers returns the struct-typed members of struct name in src:
// their struct's name and their own.
func structMembers(t *testing.T, src, name string) [][2]string {
	def := regexp.MustCompile(`struct ` + name + ` \{([^}]*)\}`).FindStringSubmatch(src)
	if def == nil {
		t.Fatalf("no struct %s", name)
	}
	var out [][2]string
	for _, m := range regexp.MustCompile(`struct (\w+) (\w+);`).FindAllStringSubmatch(def[1], -1) {
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

func sep(s string) string {
	if s == "" {
		return ""
	}
	return ","
}

func counts(end, middle int) string {
	switch {
	case end > 0 && middle > 0:
		return fmt.Sprintf("end: %d, middle: %d", end, middle)
	case end > 0:
		return fmt.Sprintf("end: %d", end)
	}
	return fmt.Sprintf("middle: %d", middle)
}
