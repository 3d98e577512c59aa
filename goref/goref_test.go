package goref

import (
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/testutil"
)

func TestPackageOf(t *testing.T) {
	for name, want := range map[string]string{
		"github.com/prometheus/client_golang/prometheus.(*counter).Inc": "github.com/prometheus/client_golang/prometheus",
		"github.com/prometheus/client_golang/prometheus.counter":        "github.com/prometheus/client_golang/prometheus",
		"sync/atomic.Value":                "sync/atomic",
		"main.work":                        "main",
		"gopkg.in/yaml.v3.(*parser).parse": "gopkg.in/yaml",
		"example.com/p.F[go.shape.int]":    "example.com/p",
		"noDot":                            "",
	} {
		if got := PackageOf(name); got != want {
			t.Errorf("PackageOf(%q) = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]bool{
		"github.com/x/y.(*T).M": true, "github.com/x/y.T.M": true, "github.com/x/y.F": true,
		"github.com/x/y.F.func1": false, "github.com/x/y.init": false, "github.com/x/y.init.0": false,
		"github.com/x/y.F[go.shape.int]": false, "main.work": false, "github.com/x/y.F.gowrap1": false,
	} {
		if got := Keepable(name); got != want {
			t.Errorf("Keepable(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestEntryLocsMatchDWARF: the register ABI's assignment (EntryLocs) from
// each signature equals what the compiler's own DWARF says at the entry
// of every function of client_golang's prometheus package the reference
// keeps (receivers, strings, slices, interfaces, floats, stack arguments).
func TestEntryLocsMatchDWARF(t *testing.T) {
	bin := testutil.Fixture(t, "go-prom-stripped").Path
	m, err := code.Open(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	names := []string{"github.com/prometheus/client_golang/prometheus.counter"}
	ref, err := Build(bin, names, keepList(m, names, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := code.Open(ref.Path, &code.Options{Params: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Close()
	a, _ := arch.ForMachine(rm.ELF.Machine)
	checked := 0
	for _, fn := range rm.Funcs() {
		if PackageOf(fn.Name) != "github.com/prometheus/client_golang/prometheus" || fn.LowPC == 0 || fn.SymbolOnly {
			continue
		}
		locs := EntryLocs(fn.Params, a, true)
		for i, p := range fn.Params {
			if p.Result || len(p.Loc.Pieces) == 0 || p.PC != fn.LowPC {
				continue // no location at the entry to compare with
			}
			checked++
			if got, want := locs[i].String(), p.Loc.String(); got != want {
				t.Errorf("%s %s %v: ABI %s, DWARF %s", fn.Name, p.Name, p.Type, got, want)
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d parameters compared", checked)
	}
	t.Logf("%d parameters of %s agree", checked, ref.Modules)
}
