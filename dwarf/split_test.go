package dwarf_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// splitVariant is one of the c-split fixture's builds: bin, the files
// holding its split units, and the build whose .dwo files gdb reads for
// it.
type splitVariant struct {
	bin   string
	units []string
	gdb   string
}

// splitVariants are the c-split fixture's builds: DWARF 5 .dwo files
// beside the objects, the same objects packed by llvm-dwp into BIN.dwp,
// and both again of the DWARF 4 GNU extension (-gdwarf-4, packed by
// binutils' dwp).
func splitVariants(t *testing.T) map[string]splitVariant {
	t.Helper()
	bin := testutil.Fixture(t, "c-split").Path
	dir := filepath.Dir(bin)
	dwos := func(name string) []string {
		fs, _ := filepath.Glob(filepath.Join(dir, name+".objs", "*.dwo"))
		if len(fs) != 2 {
			t.Fatalf("c-split fixture: %d .dwo files of %s, want 2: %v", len(fs), name, fs)
		}
		return fs
	}
	at := func(name string) string { return filepath.Join(dir, name) }
	return map[string]splitVariant{
		"dwo":  {bin, dwos("c-split"), bin},
		"dwp":  {at("c-split-dwp"), []string{at("c-split-dwp.dwp")}, bin},
		"dwo4": {at("c-split4"), dwos("c-split4"), at("c-split4")},
		"dwp4": {at("c-split4-dwp"), []string{at("c-split4-dwp.dwp")}, at("c-split4")},
	}
}

// dumpFuncs reads, with llvm-dwarfdump, the functions defined in split
// DWARF files (those with DW_AT_low_pc) and their parameters' names in
// order.
func dumpFuncs(t *testing.T, files ...string) map[string][]string {
	t.Helper()
	tool, err := exec.LookPath("llvm-dwarfdump")
	if err != nil {
		testutil.Skipf(t, "llvm-dwarfdump not installed (apt-get install llvm): %v", err)
	}
	out := map[string][]string{}
	attr := regexp.MustCompile(`^\s+(DW_AT_\w+)\s+\((.*)\)$`)
	for _, f := range files {
		b, err := exec.Command(tool, "--debug-info", f).Output()
		var ee *exec.ExitError
		// A DWARF 4 .dwo alone: its ranges count from the skeleton's
		// base, which it has not ("invalid range list offset"); the
		// entries are dumped all the same.
		if err != nil && !(errors.As(err, &ee) && strings.Contains(string(ee.Stderr), "decoding address ranges") && len(b) > 0) {
			t.Fatalf("llvm-dwarfdump %s: %v", f, err)
		}
		// Depth 1 subprograms and their depth 2 parameters, from the
		// dump's indentation.
		var fn, tag string
		var params []string
		defined := false
		flush := func() {
			if fn != "" && defined {
				out[fn] = params
			}
			fn, params, defined = "", nil, false
		}
		for _, line := range strings.Split(string(b), "\n") {
			if i := strings.Index(line, "DW_TAG_"); i > 0 && strings.HasPrefix(line, "0x") {
				depth := (i - 12) / 2 // "0x0000002c:" and two spaces a level
				tag = line[i:]
				if depth <= 1 {
					flush()
				}
				if depth > 2 {
					tag = ""
				}
				continue
			}
			m := attr.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			switch {
			case tag == "DW_TAG_subprogram" && m[1] == "DW_AT_name":
				fn = strings.Trim(m[2], `"`)
			case tag == "DW_TAG_subprogram" && m[1] == "DW_AT_low_pc":
				defined = true
			case tag == "DW_TAG_formal_parameter" && m[1] == "DW_AT_name" && fn != "":
				params = append(params, strings.Trim(m[2], `"`))
			}
		}
		flush()
	}
	return out
}

// TestSplitDWARF reads the c-split fixture's split DWARF from its .dwo
// files and from its .dwp package, of DWARF 5 and of DWARF 4's GNU
// extension: the functions defined and their parameters equal
// llvm-dwarfdump's reading of the .dwo and .dwp files; each parameter's
// location at entry equals gdb's (`info scope`); the struct both units
// share has gdb's layout (`ptype /o`).
func TestSplitDWARF(t *testing.T) {
	for name, v := range splitVariants(t) {
		t.Run(name, func(t *testing.T) {
			bin := v.bin
			want := dumpFuncs(t, v.units...)
			scopes := gdbScopes(t, v.gdb, "record_visit", "mix", "main")
			var warned []string
			f, err := dwarf.Open(bin, &dwarf.Options{Warn: func(s string) { warned = append(warned, s) }})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if len(warned) > 0 {
				t.Errorf("warnings: %q", warned)
			}
			fns, err := f.Functions(&dwarf.FuncOptions{Params: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 3 {
				t.Fatalf("llvm-dwarfdump lists %d functions defined, want at least 3: %v", len(want), want)
			}
			got := map[string]*types.Func{}
			for _, fn := range fns {
				if fn.LowPC != 0 && !fn.SymbolOnly {
					got[fn.Name] = fn
				}
			}
			params, located := 0, 0
			for fname, names := range want {
				fn := got[fname]
				if fn == nil {
					t.Errorf("%s: missing (llvm-dwarfdump: defined with parameters %v)", fname, names)
					continue
				}
				var have []string
				for _, p := range fn.Params {
					have = append(have, p.Name)
				}
				if strings.Join(have, ",") != strings.Join(names, ",") {
					t.Errorf("%s: parameters %v, llvm-dwarfdump %v", fname, have, names)
					continue
				}
				params += len(names)
				for _, p := range fn.Params {
					reg, ok := scopes[fname+"."+p.Name]
					if !ok {
						continue
					}
					located++
					if !strings.EqualFold(p.Loc.String(), reg) {
						t.Errorf("%s %s at entry: %s, gdb %s", fname, p.Name, p.Loc, reg)
					}
				}
			}
			if params < 6 || located < 6 {
				t.Errorf("%d parameters compared with llvm-dwarfdump, %d locations with gdb; want at least 6 each", params, located)
			}
			spec, err := f.Types()
			if err != nil {
				t.Fatal(err)
			}
			checkGDBLayout(t, v.gdb, spec, "visit")
		})
	}
}

// gdbScopes runs gdb's `info scope` on fns and returns, for each
// parameter (FUNC.NAME), the register gdb says holds it at the function's
// entry: the only location, or the first range's when it starts at the
// entry.
func gdbScopes(t *testing.T, bin string, fns ...string) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("gdb"); err != nil {
		testutil.Skipf(t, "gdb not installed: %v", err)
	}
	args := []string{"-batch"}
	for _, fn := range fns {
		args = append(args, "-ex", "info address "+fn, "-ex", "info scope "+fn)
	}
	out, err := exec.Command("gdb", append(args, bin)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	res := map[string]string{}
	entry := regexp.MustCompile(`^Symbol "(\w+)" is a function at address (0x[0-9a-f]+)\.`)
	single := regexp.MustCompile(`^Symbol (\w+) is a variable in \$(\w+),`)
	multi := regexp.MustCompile(`^Symbol (\w+) is multi-location:`)
	rng := regexp.MustCompile(`^\s+Range (0x[0-9a-f]+)-0x[0-9a-f]+: a variable in \$(\w+)`)
	fn, at, pending := "", uint64(0), ""
	for _, line := range strings.Split(string(out), "\n") {
		if m := entry.FindStringSubmatch(line); m != nil {
			fn, pending = m[1], ""
			at, _ = strconv.ParseUint(m[2], 0, 64)
		} else if m := single.FindStringSubmatch(line); m != nil {
			res[fn+"."+m[1]] = m[2]
		} else if m := multi.FindStringSubmatch(line); m != nil {
			pending = m[1]
		} else if m := rng.FindStringSubmatch(line); m != nil && pending != "" {
			if a, _ := strconv.ParseUint(m[1], 0, 64); a == at {
				res[fn+"."+pending] = m[2]
			}
			pending = ""
		}
	}
	return res
}

// checkGDBLayout compares struct name's member offsets in spec with gdb's
// `ptype /o`.
func checkGDBLayout(t *testing.T, bin string, spec *types.Spec, name string) {
	t.Helper()
	out, err := exec.Command("gdb", "-batch", "-ex", "ptype /o struct "+name, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	member := regexp.MustCompile(`/\*\s+(\d+)\s+\|\s+\d+ \*/\s+.*?(\w+)(\[\d+\])?;`)
	want := map[string]uint64{}
	for _, m := range member.FindAllStringSubmatch(string(out), -1) {
		want[m[2]], _ = strconv.ParseUint(m[1], 10, 64)
	}
	ts := spec.Lookup(name)
	if len(ts) != 1 || len(want) < 3 {
		t.Fatalf("struct %s: %d types in the spec, gdb %d members", name, len(ts), len(want))
	}
	s, ok := ts[0].(*types.Struct)
	if !ok {
		t.Fatalf("%s is a %T", name, ts[0])
	}
	if len(s.Members) != len(want) {
		t.Errorf("struct %s: %d members, gdb %d", name, len(s.Members), len(want))
	}
	for _, m := range s.Members {
		if off, ok := want[m.Name]; !ok || m.Offset != types.Bits(8*off) {
			t.Errorf("struct %s member %s at byte %d, gdb %d (found %v)", name, m.Name, m.Offset.Bytes(), off, ok)
		}
	}
}

// TestSplitDWARFSearch builds a split DWARF program whose .dwo names are
// relative (as a build run in its output directory writes them), moves
// the .dwo files away: with none found, Open fails with
// types.ErrNoDebugInfo naming them; with one, the other is warned of;
// elfx.DebugDirs (--debuginfo) finds them again.
func TestSplitDWARFSearch(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	src := testutil.Fixture(t, "c-split").Dir
	dir, moved := t.TempDir(), t.TempDir()
	for _, f := range []string{"main.c", "mix.c"} {
		cmd := exec.Command("gcc", "-g", "-O2", "-gsplit-dwarf", "-I", src, "-c", filepath.Join(src, f), "-o", strings.TrimSuffix(f, ".c")+".o")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}
	cmd := exec.Command("gcc", "-o", "prog", "main.o", "mix.o")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, f := range []string{"main.dwo", "mix.dwo"} {
		if err := os.Rename(filepath.Join(dir, f), filepath.Join(moved, f)); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "prog")
	count := func() (int, []string) {
		var warned []string
		f, err := dwarf.Open(bin, &dwarf.Options{Warn: func(s string) { warned = append(warned, s) }})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fns, err := f.Functions(&dwarf.FuncOptions{Params: true})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, fn := range fns {
			if (fn.Name == "record_visit" || fn.Name == "mix") && len(fn.Params) >= 2 {
				n++
			}
		}
		return n, warned
	}
	_, err := dwarf.Open(bin, nil)
	if !errors.Is(err, types.ErrNoDebugInfo) || err == nil || !strings.Contains(err.Error(), "main.dwo") || !strings.Contains(err.Error(), "and 1 more") {
		t.Errorf("without the .dwo files: %v; want types.ErrNoDebugInfo naming main.dwo and 1 more", err)
	}
	// One .dwo back beside the binary: the other is warned of.
	if err := os.Link(filepath.Join(moved, "main.dwo"), filepath.Join(dir, "main.dwo")); err != nil {
		t.Fatal(err)
	}
	n, warned := count()
	if n != 1 || len(warned) != 1 || !strings.Contains(warned[0], "mix.dwo") {
		t.Errorf("with main.dwo only: %d functions with parameters, warnings %q; want 1 and one naming mix.dwo", n, warned)
	}
	elfx.DebugDirs = []string{moved}
	defer func() { elfx.DebugDirs = nil }()
	if n, warned = count(); n != 2 || len(warned) != 0 {
		t.Errorf("with --debuginfo %s: %d functions with parameters, warnings %q; want 2 and none", moved, n, warned)
	}
}

// TestSplitSkeleton: Split (what keeps a split binary out of the index
// cache) says so for each build of the c-split fixture the compiler made
// with -gsplit-dwarf, DWARF 5 and 4, and not for its plain build; the
// same with the debug sections compressed by objcopy, as ELF's
// SHF_COMPRESSED (zlib) and as GNU's .zdebug sections (zlib-gnu).
func TestSplitSkeleton(t *testing.T) {
	bin := testutil.Fixture(t, "c-split").Path
	dir := filepath.Dir(bin)
	tmp := t.TempDir()
	checked := 0
	for name, split := range map[string]bool{"c-split": true, "c-split4": true, "c-split-plain": false} {
		for _, gz := range []string{"", "zlib", "zlib-gnu"} {
			path := filepath.Join(dir, name)
			if gz != "" {
				path = filepath.Join(tmp, name+"-"+gz)
				if out, err := exec.Command("objcopy", "--compress-debug-sections="+gz, filepath.Join(dir, name), path).CombinedOutput(); err != nil {
					t.Fatalf("objcopy: %v\n%s", err, out)
				}
			}
			ef, err := elfx.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := dwarf.Split(ef); got != split {
				t.Errorf("%s (%s): Split = %v, want %v", name, gz, got, split)
			}
			ef.Close()
			checked++
		}
	}
	if checked != 9 {
		t.Errorf("%d builds checked, want 9", checked)
	}
}
