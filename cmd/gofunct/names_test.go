package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/cmd/internal/cmdtest"
	"github.com/binscope/binscope/internal/testutil"
)

// notListed returns the names of want that gofunct's one-name-a-line
// output out does not list.
func notListed(out string, want []string) []string {
	var missing []string
	for _, w := range want {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(w) + `$`).MatchString(out) {
			missing = append(missing, w)
		}
	}
	return missing
}

// TestLibcAliases: free, fopen, realloc and malloc, which glibc defines
// as __libc_free, _IO_new_fopen, __libc_realloc and __libc_malloc, are
// found by the names programs call them by (goprobe's TestStatLibcAliases
// counts their calls).
func TestLibcAliases(t *testing.T) {
	libc := testutil.RealBinary(t, "libc")
	for _, def := range []string{"free", "fopen", "realloc", "malloc", "puts", "_IO_puts"} {
		code, out, errs := runGofunct("-f", def, libc)
		if code != 0 || strings.TrimSpace(out) == "" {
			t.Errorf("gofunct -f %s: exit %d %q %s", def, code, out, errs)
		}
	}
}

// TestRustStrippedDemangled: rust-real without DWARF lists its functions
// by their demangled names (which goprobe's
// TestStatRustStrippedDemangled probes).
func TestRustStrippedDemangled(t *testing.T) {
	b := testutil.Fixture(t, "rust-real-stripped")
	code, out, errs := runGofunct(b.Path)
	if code != 0 {
		t.Fatalf("gofunct: exit %d: %s", code, errs)
	}
	if m := notListed(out, []string{"real::parse_line", "real::Stats::record", "real::checksum", "real::main"}); len(m) > 0 {
		t.Errorf("gofunct does not list %v", m)
	}
}

// TestCloneOnly: functions GCC kept only as clones are listed by their own
// name: cpp-real's scale_by (scale_by.constprop.0) and weigh
// (weigh.constprop.0.isra.0), and a C program's f (f.constprop.0).
func TestCloneOnly(t *testing.T) {
	b := testutil.Fixture(t, "cpp-real")
	cprog := cmdtest.BuildCloneC(t, true)
	for bin, names := range map[string][]string{b.Path: {"real::scale_by", "real::weigh"}, cprog: {"f"}} {
		code, out, errs := runGofunct("-f", strings.Join(names, ","), bin)
		if code != 0 || strings.Count(out, "\n") != len(names) || len(notListed(out, names)) > 0 {
			t.Errorf("gofunct -f %v: exit %d %q %s", names, code, out, errs)
		}
	}
}

// TestGofunctWithoutDWARF: a C program built with -O2 and no -g lists its
// functions from the symbol table, f under its clone's symbol.
func TestGofunctWithoutDWARF(t *testing.T) {
	bin := cmdtest.BuildCloneC(t, false)
	code, out, errs := runGofunct(bin)
	if code != 0 {
		t.Fatalf("gofunct: exit %d: %s", code, errs)
	}
	if m := notListed(out, []string{"main", "f.constprop.0", "_start"}); len(m) > 0 {
		t.Errorf("gofunct does not list %v:\n%s", m, out)
	}
}

// TestGoCloneNames: Go functions called clone, part and isra are listed
// as themselves, never taken for GCC clones.
func TestGoCloneNames(t *testing.T) {
	bin := cmdtest.BuildGoCloneNames(t)
	names := cmdtest.GoCloneNames
	code, out, errs := runGofunct("-f", strings.Join(names, ","), bin)
	if code != 0 || strings.Count(out, "\n") != len(names) || len(notListed(out, names)) > 0 {
		t.Errorf("gofunct -f %v: exit %d %q %s", names, code, out, errs)
	}
}

// TestCloneOnlyParamNames: a function GCC kept only as a clone
// (cpp-real's scale_by.constprop.0, weigh.constprop.0.isra.0) names its
// parameters as pfunct does: the names are on the abstract instance, the
// declaration its DW_AT_specification points to lists only types.
func TestCloneOnlyParamNames(t *testing.T) {
	b := testutil.Fixture(t, "cpp-real")
	pf := pfunctLines(t, b.Path)
	for _, name := range []string{"scale_by", "weigh"} {
		want := map[string]bool{}
		for _, l := range pf[name] {
			want[paramNames(l)] = true
		}
		code, out, errs := runGofunct("--no-cache", "-P", "-f", "real::"+name, b.Path)
		got := paramNames(strings.TrimSpace(out))
		// pfunct prints the parameters of both entries in either
		// order (weigh's isra clone reorders them); ours are the
		// declared order, which is one of pfunct's lines.
		if code != 0 || len(want) == 0 || !want[got] || !strings.Contains(got, ",") {
			t.Errorf("gofunct -P -f real::%s: exit %d %q %s; pfunct's names: %v", name, code, out, errs, want)
		}
	}
}

// paramNames is the comma-separated list of the parameter names of a -P
// line: the last identifier of each parameter.
func paramNames(line string) string {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return ""
	}
	var names []string
	for _, p := range strings.Split(line[open+1:end], ",") {
		f := strings.FieldsFunc(p, func(r rune) bool { return r == ' ' || r == '*' || r == '&' })
		if len(f) < 2 {
			return "" // a parameter without a name
		}
		names = append(names, f[len(f)-1])
	}
	return strings.Join(names, ",")
}
