package probe

import (
	"debug/elf"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/spec"
)

// TestQuickEqualsFull: a definition resolved by its symbol, reading only
// the units that can hold the function and its inline expansions, gives
// the same sites and argument programs as one resolved after reading
// every function, for a sample of every fixture's functions.
func TestQuickEqualsFull(t *testing.T) {
	bins := map[string]func(t *testing.T) string{
		"part.c": func(t *testing.T) string {
			bin := filepath.Join(t.TempDir(), "part")
			if out, err := exec.Command("gcc", "-O3", "-g", "-o", bin, filepath.Join("testdata", "count", "part.c")).CombinedOutput(); err != nil {
				testutil.Skipf(t, "gcc: %v %s", err, out)
			}
			return bin
		},
	}
	for _, name := range []string{"go-prom", "c-layouts", "cpp-layouts", "rust-layouts", "zig-layouts"} {
		bins[name] = func(t *testing.T) string { return testutil.Fixture(t, name).Path }
	}
	for name, build := range bins {
		t.Run(name, func(t *testing.T) {
			path := build(t)
			quick, full := openResolver(t, path), openResolver(t, path)
			if err := full.t.all(); err != nil {
				t.Fatal(err)
			}
			syms, _ := full.t.ef.Symbols()
			count := map[string]int{}
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
					count[s.Name]++
				}
			}
			// A sample of the functions, and up to 20 with inline
			// expansions, which come from other units.
			var names, withInlined []string
			for _, fn := range full.t.model.Funcs() {
				name := ""
				switch {
				case fn.LowPC == 0:
				case count[fn.Name] == 1:
					name = fn.Name
				case count[fn.Linkage] == 1: // Rust and C++: the symbol's name
					name = fn.Linkage
				}
				if name != "" && len(fn.Inlined) > 0 && len(withInlined) < 20 {
					withInlined = append(withInlined, name)
				} else if name != "" {
					names = append(names, name)
				}
			}
			if len(names) == 0 {
				t.Fatal("no function with a symbol")
			}
			step := max(1, len(names)/40)
			var sample []string
			for i := 0; i < len(names); i += step {
				sample = append(sample, names[i])
			}
			sample = append(sample, withInlined...)
			inlined := 0
			for _, name := range sample {
				for _, text := range []string{name + " $params", name + "%return"} {
					d, err := Parse(text)
					if err != nil {
						continue // a name the definition syntax cannot carry
					}
					pf := sameResolution(t, d, quick, full)
					if pf == nil {
						continue
					}
					for _, s := range pf.Sites {
						if s.Kind == spec.SiteInline {
							inlined++
						}
					}
				}
			}
			t.Logf("%d functions compared, %d inline sites", len(sample), inlined)
		})
	}
}

// TestQuickByDemangledName: a C++ or Rust function named as users write
// it (demangled, no parameter list) resolves from the units of the one
// symbol that demangles to that name as it does after reading every
// function: the same sites and argument programs, or the same error (the
// name of several overloads), for a sample of every function with a
// linkage name; at least ten of them found without reading every
// function.
func TestQuickByDemangledName(t *testing.T) {
	for _, name := range []string{"cpp-layouts", "rust-layouts"} {
		t.Run(name, func(t *testing.T) {
			path := testutil.Fixture(t, name).Path
			base, full := openResolver(t, path), openResolver(t, path)
			if err := full.t.all(); err != nil {
				t.Fatal(err)
			}
			base.t.syms = code.Symbols(base.t.f)
			var names []string
			seen := map[string]bool{}
			for _, fn := range full.t.model.Funcs() {
				if fn.LowPC != 0 && fn.Linkage != "" && fn.Linkage != fn.Name && !seen[fn.Name] {
					seen[fn.Name] = true
					names = append(names, fn.Name)
				}
			}
			step := max(1, len(names)/24)
			compared, quick := 0, 0
			for i := 0; i < len(names); i += step {
				d, err := Parse(names[i] + " $params")
				if err != nil {
					continue // a name the definition syntax cannot carry
				}
				t0 := *base.t // a resolver that has read no function yet
				r := newResolver(&t0)
				sameResolution(t, d, r, full)
				compared++
				if r.t.model == nil {
					quick++
				}
			}
			t.Logf("%d names compared, %d found from their symbol's units", compared, quick)
			if quick < 10 {
				t.Errorf("%d of %d names found from their symbol's units, want at least 10", quick, compared)
			}
		})
	}
}

// sameResolution resolves d with quick and with full (which has read
// every function) and requires the same probe, or the same error; it
// returns full's probe (nil on an error).
func sameResolution(t *testing.T, d *Def, quick, full *Resolver) *spec.Probe {
	t.Helper()
	pq, errq := quick.Resolve(d)
	pf, errf := full.Resolve(d)
	if (errq == nil) != (errf == nil) || (errq != nil && errq.Error() != errf.Error()) {
		t.Errorf("%s: quick error %v, full error %v", d.Text, errq, errf)
		return nil
	}
	if errq != nil {
		return nil
	}
	jq, _ := json.Marshal(pq)
	jf, _ := json.Marshal(pf)
	if string(jq) != string(jf) {
		t.Errorf("%s:\nquick %s\nfull  %s", d.Text, jq, jf)
	}
	return pf
}
