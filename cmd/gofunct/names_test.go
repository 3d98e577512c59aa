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
