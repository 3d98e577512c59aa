package main

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/binscope/binscope/cmd/internal/cmdtest"
	"github.com/binscope/binscope/internal/testutil"
)

// listed is one function of `gofunct --json`.
type listed struct {
	Name    string `json:"name"`
	Linkage string `json:"linkage_name"`
	LowPC   uint64 `json:"low_pc"`
	Proto   string `json:"prototype"`
}

func gofunctJSON(t *testing.T, args ...string) []listed {
	t.Helper()
	code, out, errs := runGofunct(append([]string{"--json"}, args...)...)
	if code != 0 {
		t.Fatalf("gofunct --json %v: exit %d: %s", args, code, errs)
	}
	var fns []listed
	if err := json.Unmarshal([]byte(out), &fns); err != nil {
		t.Fatal(err)
	}
	return fns
}

// dieFacts is what the DWARF says of the functions of one name, read here
// with the standard library only to explain a difference between the two
// tools, never to decide the set.
type dieFacts struct {
	withCode map[string]bool // DW_AT_name of a subprogram with code (through its origin chain)
	lowPC    map[string]bool // ... one with DW_AT_low_pc, not only DW_AT_ranges
	inlined  map[string]bool // DW_AT_name of an inlined subroutine's origin
	declared map[string]bool // any subprogram DIE
	local    map[string]bool // ... and every one of them inside another subprogram (a local class's member)
	byLink   map[string]string
}

// readDWARF reads path's DWARF with the standard library (all of it is
// in memory once read: the file is closed).
func readDWARF(t *testing.T, path string) *dwarf.Data {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readDIEs(t *testing.T, path string) dieFacts {
	t.Helper()
	d := readDWARF(t, path)
	type sub struct {
		name, link   string
		origin       dwarf.Offset
		code, hasLow bool
		local        bool
	}
	subs := map[dwarf.Offset]*sub{}
	var inl []dwarf.Offset
	r := d.Reader()
	var tags []dwarf.Tag // the open entries' tags
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			if len(tags) > 0 {
				tags = tags[:len(tags)-1]
			}
			continue
		}
		inFunc := false
		for _, tg := range tags {
			inFunc = inFunc || tg == dwarf.TagSubprogram
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			tags = tags[:0]
		}
		if e.Children {
			tags = append(tags, e.Tag)
		}
		switch e.Tag {
		case dwarf.TagSubprogram:
			s := &sub{local: inFunc}
			s.name, _ = e.Val(dwarf.AttrName).(string)
			s.link, _ = e.Val(dwarf.AttrLinkageName).(string)
			if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
				s.origin = o
			} else if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
				s.origin = o
			}
			_, s.hasLow = e.Val(dwarf.AttrLowpc).(uint64)
			s.code = s.hasLow || e.Val(dwarf.AttrRanges) != nil
			subs[e.Offset] = s
		case dwarf.TagInlinedSubroutine:
			if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
				inl = append(inl, o)
			}
		}
	}
	// name and linkage through the origin chain.
	chain := func(s *sub) (name, link string) {
		for i := 0; s != nil && i < 8; i++ {
			if name == "" {
				name = s.name
			}
			if link == "" {
				link = s.link
			}
			s = subs[s.origin]
		}
		return name, link
	}
	df := dieFacts{withCode: map[string]bool{}, lowPC: map[string]bool{}, inlined: map[string]bool{},
		declared: map[string]bool{}, local: map[string]bool{}, byLink: map[string]string{}}
	notLocal := map[string]bool{}
	for _, s := range subs {
		name, link := chain(s)
		if name == "" {
			continue
		}
		df.declared[name] = true
		if s.local {
			df.local[name] = true
		} else {
			notLocal[name] = true
		}
		if link != "" {
			df.byLink[link] = name
		}
		if s.code {
			df.withCode[name] = true
			if s.hasLow {
				df.lowPC[name] = true
			}
		}
	}
	for n := range notLocal {
		delete(df.local, n)
	}
	for _, o := range inl {
		if s := subs[o]; s != nil {
			if name, _ := chain(s); name != "" {
				df.inlined[name] = true
			}
		}
	}
	return df
}

// pfunctNames runs pfunct (dwarves) on path: every function name it lists.
func pfunctNames(t *testing.T, path string) map[string]bool {
	t.Helper()
	pfunct, err := exec.LookPath("pfunct")
	if err != nil {
		testutil.Skipf(t, "pfunct not installed (apt-get install dwarves): %v", err)
	}
	var stdout bytes.Buffer
	cmd := exec.Command(pfunct, path)
	cmd.Stdout = &stdout // stderr: pfunct's complaints about tags it does not know
	if err := cmd.Run(); err != nil {
		t.Fatalf("pfunct %s: %v", path, err)
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if n := strings.TrimSpace(sc.Text()); n != "" {
			names[n] = true
		}
	}
	return names
}

// TestGofunctAgainstPfunct: gofunct's functions against pfunct's on
// glibc (its debug file), cpp-real and a C program built with -O2. Both
// are joined on the DWARF name (gofunct prints C++ qualified and demangled;
// its linkage name leads back to DW_AT_name). Every difference must have a
// reason the test can show from the DWARF or the symbol table.
func TestGofunctAgainstPfunct(t *testing.T) {
	if testing.Short() {
		t.Skip("reads all of libc's DWARF twice")
	}
	cprog := cmdtest.BuildCloneC(t, true)
	for _, tc := range []struct {
		name      string
		bin       func() string
		minCommon int
	}{
		{"libc", func() string { return testutil.RealBinary(t, "libc") }, 4000},
		{"cpp-real", func() string { return testutil.Fixture(t, "cpp-real").Path }, 450},
		{"c-O2", func() string { return cprog }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := tc.bin()
			debug := testutil.DebugFile(bin)
			pf := pfunctNames(t, debug)
			dies := readDIEs(t, debug)
			syms := funcSymbolAddrs(t, bin)
			gf := map[string]listed{}
			for _, fn := range gofunctJSON(t, bin) {
				key := fn.Name
				if n, ok := dies.byLink[fn.Linkage]; ok {
					key = n
				} else if n := lastComponent(fn.Name); fn.Linkage == "" && dies.declared[n] {
					key = n // no linkage name (GCC gives none to a static or inline-only function)
				}
				gf[key] = fn
			}
			common := 0
			reasons := map[string][]string{}
			var unexplained []string
			for n := range pf {
				if _, ok := gf[n]; ok {
					common++
					continue
				}
				switch {
				case !dies.withCode[n] && !dies.inlined[n]:
					reasons["pfunct lists a declaration or abstract instance without code or inline expansion"] = append(reasons["pfunct lists a declaration or abstract instance without code or inline expansion"], n)
				default:
					unexplained = append(unexplained, "only pfunct: "+n)
				}
			}
			for k, fn := range gf {
				if pf[k] {
					continue
				}
				switch {
				case !dies.declared[k] && fn.LowPC != 0 && syms[fn.LowPC]:
					reasons["only a symbol names it (assembly, crt files): gofunct adds it from .symtab"] = append(reasons["only a symbol names it (assembly, crt files): gofunct adds it from .symtab"], k)
				case dies.local[k]:
					reasons["a member of a class local to a function, which pfunct does not visit"] = append(reasons["a member of a class local to a function, which pfunct does not visit"], k)
				case dies.withCode[k] && !dies.lowPC[k]:
					reasons["its code is in DW_AT_ranges only (no DW_AT_low_pc), which pfunct skips"] = append(reasons["its code is in DW_AT_ranges only (no DW_AT_low_pc), which pfunct skips"], k)
				default:
					unexplained = append(unexplained, "only gofunct: "+k)
				}
			}
			for r, ns := range reasons {
				sort.Strings(ns)
				t.Logf("%d because %s (e.g. %s)", len(ns), r, strings.Join(ns[:min(4, len(ns))], ", "))
			}
			t.Logf("%d functions in both, pfunct %d names, gofunct %d", common, len(pf), len(gf))
			if common < tc.minCommon {
				t.Errorf("only %d functions in both; want at least %d", common, tc.minCommon)
			}
			sort.Strings(unexplained)
			if len(unexplained) > 0 {
				t.Errorf("%d unexplained differences:\n%s", len(unexplained), strings.Join(unexplained[:min(40, len(unexplained))], "\n"))
			}
		})
	}
}

// lastComponent is a qualified C++ name's last component, template
// arguments and parameter lists kept: real::total<int, long> → total<int, long>.
func lastComponent(name string) string {
	depth, last := 0, 0
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '<' || c == '(':
			depth++
		case (c == '>' || c == ')') && depth > 0:
			depth--
		case depth == 0 && c == ':' && i+1 < len(name) && name[i+1] == ':':
			last = i + 2
			i++
		}
	}
	return name[last:]
}

// funcSymbolAddrs are the addresses of every STT_FUNC symbol of path and
// its debug file, with a size or not (crt files' frame_dummy has none).
func funcSymbolAddrs(t *testing.T, path string) map[uint64]bool {
	t.Helper()
	out := map[uint64]bool{}
	for _, p := range []string{path, testutil.DebugFile(path)} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		syms, _ := f.Symbols()
		dyn, _ := f.DynamicSymbols()
		for _, s := range append(syms, dyn...) {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
				out[s.Value] = true
			}
		}
		f.Close()
	}
	return out
}
