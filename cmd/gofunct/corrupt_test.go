package main

import (
	stddwarf "debug/dwarf"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestCorruptDIE: a DIE whose abbreviation code no table holds
// (testutil.CorruptDIEs) costs the child of the unit DIE that holds it,
// up to its DW_AT_sibling, or the rest of the unit without one. Of the
// prototypes pfunct -P prints of the whole program, gofunct -P prints
// those whose subprogram is not lost: as pfunct does when none of the
// DIEs of their types (testutil.TypeDIEs) is, else with the type lost
// as `?`; then one line names the file, .debug_info and the DIE, exit
// status 1.
func TestCorruptDIE(t *testing.T) {
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	for _, dd := range testutil.CorruptDIEs(t) {
		t.Run(dd.Name, func(t *testing.T) {
			want := mustRun(t, "pfunct", "-P", dd.Good)
			_, _, d := testutil.ReadDWARF(t, dd.Good)
			fate := funcFates(t, d, dd)
			code, stdout, stderr := runGofunct("-P", "--no-cache", dd.Bad)
			line := fmt.Sprintf("gofunct: %s: section .debug_info at offset %#x: unreadable DIE: ", dd.Bad, dd.Off)
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
				t.Errorf("exit %d, stderr %q: want 1, one line starting %q", code, stderr, line)
			}
			got := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
				got[protoName(l)] = l
			}
			count := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
				name := protoName(l)
				g, printed := got[name]
				count[fate[name]]++
				switch fate[name] {
				case "lost":
					if printed {
						t.Errorf("%q printed; its subprogram is lost", g)
					}
				case "unknown":
					if !printed || !strings.Contains(g, "?") || g == l {
						t.Errorf("%s: %q printed; want pfunct's %q with the type lost as ?", name, g, l)
					}
				default:
					if g != l {
						t.Errorf("%s: %q printed; want pfunct's %q", name, g, l)
					}
				}
			}
			t.Logf("of pfunct's prototypes: %v", count)
			if count["kept"] < 4 || count["lost"]+count["unknown"] < 1 {
				t.Errorf("%v: want 4 or more kept, and one lost or unknown", count)
			}
		})
	}
}

// funcFates says of every subprogram of d with a name whether dd loses
// it ("lost"), a DIE of its return or parameters' types ("unknown"), or
// none of those ("kept").
func funcFates(t *testing.T, d *stddwarf.Data, dd testutil.DIEDamage) map[string]string {
	fate := map[string]string{}
	r := d.Reader()
	for e, err := r.Next(); e != nil && err == nil; e, err = r.Next() {
		name, _ := e.Val(stddwarf.AttrName).(string)
		if e.Tag != stddwarf.TagSubprogram || name == "" {
			continue
		}
		fate[name] = "kept"
		if dd.Lost(e.Offset) {
			fate[name] = "lost"
			continue
		}
		refs := typeRefs(d, e)
		for _, ref := range refs {
			for _, off := range testutil.TypeDIEs(t, d, ref) {
				if dd.Lost(off) {
					fate[name] = "unknown"
				}
			}
		}
	}
	return fate
}

// typeRefs are the types fn (a subprogram of d) returns and its formal
// parameters have.
func typeRefs(d *stddwarf.Data, fn *stddwarf.Entry) []stddwarf.Offset {
	var refs []stddwarf.Offset
	if ref, ok := fn.Val(stddwarf.AttrType).(stddwarf.Offset); ok {
		refs = append(refs, ref)
	}
	if !fn.Children {
		return refs
	}
	r := d.Reader()
	r.Seek(fn.Offset)
	r.Next()
	for c, err := r.Next(); c != nil && err == nil && c.Tag != 0; c, err = r.Next() {
		if ref, ok := c.Val(stddwarf.AttrType).(stddwarf.Offset); ok && c.Tag == stddwarf.TagFormalParameter {
			refs = append(refs, ref)
		}
		r.SkipChildren()
	}
	return refs
}

// TestCorruptDIEVars: --vars on a program with a DIE that does not read
// (testutil.CorruptDIEs) prints, for a function whose subprogram and
// types are not lost (funcFates, from debug/dwarf), what it prints on the
// undamaged program, each parameter and local debug/dwarf lists among
// the function's children; one whose type is lost, with that type as ?;
// then one line names the file, .debug_info and the DIE, exit status 1.
// A lost function is an error of one line.
func TestCorruptDIEVars(t *testing.T) {
	eachDamaged(t, func(t *testing.T, dd testutil.DIEDamage, d *stddwarf.Data, fate map[string]string, line string) {
		count := map[string]int{}
		for name, fa := range fate {
			code, want, stderr := runGofunct("--vars", name, dd.Good)
			if code != 0 {
				t.Fatalf("--vars %s of the undamaged program: exit %d: %s", name, code, stderr)
			}
			code, got, stderr := runGofunct("--vars", name, dd.Bad)
			switch fa {
			case "kept":
				count[fa]++
				if code != 1 || got != want || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
					t.Errorf("--vars %s: exit %d, stderr %q, printed:\n%s\nwant exit 1, one line starting %q, and as the undamaged program:\n%s", name, code, stderr, got, line, want)
				}
				for _, v := range childNames(d, name) {
					if !strings.Contains(got, " "+v+" ") {
						t.Errorf("--vars %s: %s, a child of its DIE, not printed:\n%s", name, v, got)
					}
				}
			case "unknown":
				count[fa]++
				if code != 1 || !strings.Contains(got, " ? ") || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
					t.Errorf("--vars %s (a type lost): exit %d, stderr %q, printed:\n%s\nwant exit 1, one line starting %q, the type as ?", name, code, stderr, got, line)
				}
			case "lost":
				count[fa]++
				if code != 1 || got != "" || strings.Count(stderr, "\n") != 1 {
					t.Errorf("--vars %s (lost): exit %d, printed %q, stderr %q: want 1, nothing, one line", name, code, got, stderr)
				}
			}
		}
		t.Logf("functions: %v", count)
		if count["kept"] < 4 || (dd.Name == "subprogram" && count["lost"] < 1) {
			t.Errorf("%v: want 4 or more kept (and one lost for a subprogram damaged)", count)
		}
	})
}

// childNames are the names of the formal parameters and variables
// debug/dwarf reads among the children of the subprogram called name.
func childNames(d *stddwarf.Data, name string) []string {
	r := d.Reader()
	for e, err := r.Next(); e != nil && err == nil; e, err = r.Next() {
		if e.Tag != stddwarf.TagSubprogram || e.Val(stddwarf.AttrName) != name || !e.Children {
			continue
		}
		var out []string
		for c, err := r.Next(); c != nil && err == nil && c.Tag != 0; c, err = r.Next() {
			if n, ok := c.Val(stddwarf.AttrName).(string); ok && (c.Tag == stddwarf.TagFormalParameter || c.Tag == stddwarf.TagVariable) {
				out = append(out, n)
			}
			r.SkipChildren()
		}
		return out
	}
	return nil
}

// TestCorruptDIEScopes: -S (pfunct's count of local variables) and -V on
// a program with a DIE that does not read (testutil.CorruptDIEs) print,
// of each function whose subprogram is not lost (funcFates, from
// debug/dwarf), what pfunct -S prints of the undamaged program, and the
// -V block of the undamaged program (a type lost as ?), none of a lost
// one; then one line names the file, .debug_info and the DIE, exit 1.
func TestCorruptDIEScopes(t *testing.T) {
	eachDamaged(t, func(t *testing.T, dd testutil.DIEDamage, _ *stddwarf.Data, fate map[string]string, line string) {
		counts := map[string]int{}
		for _, flag := range []string{"-S", "-V"} {
			code, got, stderr := runGofunct(flag, "--no-cache", dd.Bad)
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, line) {
				t.Errorf("%s: exit %d, stderr %q: want 1, one line starting %q", flag, code, stderr, line)
			}
			want := mustRun(t, "pfunct", "-S", dd.Good)
			if flag == "-V" {
				_, want, _ = runGofunct("-V", "--no-cache", dd.Good)
			}
			for _, block := range strings.SplitAfter(strings.TrimSpace(want), "*/\n") {
				block = strings.TrimSpace(block) + "\n"
				name, _, _ := strings.Cut(block, ":")
				if flag == "-V" {
					name = protoName(strings.SplitN(block, "\n", 2)[0])
				}
				fa, ok := fate[name]
				switch {
				case !ok:
				case fa == "lost" && strings.Contains(got, block):
					t.Errorf("%s: %q printed; %s is lost", flag, block, name)
				case fa == "kept" && !strings.Contains(got, block):
					t.Errorf("%s: %q not printed:\n%s", flag, block, got)
				default:
					counts[flag+" "+fa]++
				}
			}
		}
		t.Logf("functions: %v", counts)
		if counts["-S kept"] < 1 || counts["-V kept"] < 4 {
			t.Errorf("%v: want 1 or more kept by -S, 4 or more by -V", counts)
		}
	})
}

// eachDamaged runs f on each damaged copy of testutil.CorruptDIEs, with
// debug/dwarf's reading of the undamaged program, the fate of its
// functions (funcFates) and the start of gofunct's line naming the DIE.
func eachDamaged(t *testing.T, f func(t *testing.T, dd testutil.DIEDamage, d *stddwarf.Data, fate map[string]string, line string)) {
	t.Setenv("BINSCOPE_CACHE", t.TempDir())
	for _, dd := range testutil.CorruptDIEs(t) {
		t.Run(dd.Name, func(t *testing.T) {
			_, _, d := testutil.ReadDWARF(t, dd.Good)
			f(t, dd, d, funcFates(t, d, dd), fmt.Sprintf("gofunct: %s: section .debug_info at offset %#x: unreadable DIE: ", dd.Bad, dd.Off))
		})
	}
}

// TestCorruptDIELost: a function whose subprogram is lost (funcFates,
// from debug/dwarf) but whose symbol lies in the damaged unit is printed
// by -V with what is known, its name and size, and nothing made up: its
// prototype `? NAME(?)` (never void) and a comment naming the DIE that
// does not read (testutil's offset, which readelf names); -L prints the
// rows of .debug_line as for the undamaged program under a header whose
// declaration line is `?`, never 0; --json gives its parameters as null
// (unknown) and the DIE's offset as lost_die.
func TestCorruptDIELost(t *testing.T) {
	eachDamaged(t, func(t *testing.T, dd testutil.DIEDamage, _ *stddwarf.Data, fate map[string]string, _ string) {
		_, verbose, _ := runGofunct("-V", "--no-cache", dd.Bad)
		_, js, _ := runGofunct("--json", "--no-cache", dd.Bad)
		var listed []struct {
			Name    string
			Params  []any
			LostDIE uint64 `json:"lost_die"`
		}
		if err := json.Unmarshal([]byte(js), &listed); err != nil {
			t.Fatalf("--json: %v", err)
		}
		lostDIE := map[string]uint64{}
		for _, l := range listed {
			if l.Params == nil {
				lostDIE[l.Name] = l.LostDIE
			}
		}
		n := 0
		for name, fa := range fate {
			if fa != "lost" {
				continue
			}
			n++
			block := fmt.Sprintf("? %s(?);\n/* size: ", name)
			tail := fmt.Sprintf(", debug info lost with the unreadable DIE at %#x */\n", dd.Off)
			i := strings.Index(verbose, block)
			if i < 0 || !strings.HasPrefix(verbose[i+len(block)+strings.IndexByte(verbose[i+len(block):], ','):], tail) {
				t.Errorf("-V: no block %q...%q for %s:\n%s", block, tail, name, verbose)
			}
			if lostDIE[name] != dd.Off {
				t.Errorf("--json: %s: lost_die %#x, params not null: want %#x and null", name, lostDIE[name], dd.Off)
			}
			if strings.Contains(verbose, " "+name+"(void)") {
				t.Errorf("-V: %s printed with (void); its DIE is lost", name)
			}
			_, want, _ := runGofunct("-L", name, dd.Good)
			code, got, _ := runGofunct("-L", name, "--no-cache", dd.Bad)
			wantHead, wantRows, _ := strings.Cut(want, "\n")
			head, rows, _ := strings.Cut(got, "\n")
			if code != 1 || rows != wantRows || rows == "" || strings.HasSuffix(head, ":0>") ||
				head != wantHead[:strings.LastIndexByte(wantHead, ':')]+":?>" {
				t.Errorf("-L %s: exit %d, printed:\n%s\nwant exit 1, the rows of the undamaged program:\n%s", name, code, got, want)
			}
		}
		if dd.Name == "subprogram" && n < 1 {
			t.Errorf("no function lost: want 1 or more")
		}
	})
}
