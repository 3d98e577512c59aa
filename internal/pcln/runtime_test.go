package pcln_test

import (
	"os/exec"
	"slices"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/internal/testutil"
)

// TestPrometheusRuntimeAddresses: Debian's /usr/bin/prometheus (go1.19,
// cgo, external linking, stripped) symbolizes its own goroutine and heap
// profiles with the runtime's tables; every address in them lies in the
// function of that name in the table Open reads, and the model of code
// gives it the runtime's inline chain (Go 1.19's inline tree). Counting
// from the ELF .text start (0x100 below runtime.text in this binary)
// fails this.
func TestPrometheusRuntimeAddresses(t *testing.T) {
	p := testutil.StartPrometheus(t, "global: {scrape_interval: 1h}\n", true)
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elfx.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	tab, err := pcln.Open(ef)
	if err != nil {
		t.Fatal(err)
	}
	m, err := code.NewFromELF(ef)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	inlined := 0
	for _, prof := range []string{"goroutine", "heap", "allocs"} {
		pr, err := testutil.FetchProfile("http://" + p.Addr + "/debug/pprof/" + prof)
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range testutil.FileLocations(pr, bin) {
			if seen[loc.Address] {
				continue
			}
			seen[loc.Address] = true
			// The runtime's frames are innermost first: the last is the
			// function the code belongs to. The address is a return
			// address: the call before it is in the same function.
			wantChain := testutil.Frames(loc)
			want := wantChain[len(wantChain)-1]
			fn := tab.Lines.PCToFunc(loc.Address - 1)
			// The inline chain: the runtime's frames against the model's,
			// from the table's inline tree (Go 1.19's format here).
			var gotChain []string
			for _, f := range m.At(loc.Address - 1) {
				gotChain = append(gotChain, f.Name)
			}
			if len(wantChain) > 1 {
				inlined++
			}
			if !slices.Equal(wantChain, gotChain) {
				t.Errorf("%#x: the runtime's frames %v, the model's %v", loc.Address, wantChain, gotChain)
			}
			if fn == nil || fn.Name != want {
				got := "nothing"
				if fn != nil {
					got = fn.Name
				}
				t.Errorf("%#x: the runtime says %s, the table %s", loc.Address, want, got)
			}
		}
	}
	// An idle server's three profiles hold 150-190 addresses, 9-18 of
	// them in inlined calls (Go's sampling decides which).
	if len(seen) < 100 || inlined < 5 {
		t.Fatalf("only %d addresses of prometheus's own profiles compared, %d in inlined calls", len(seen), inlined)
	}
	t.Logf("%d addresses of prometheus's profiles in the runtime's function and inline chain, %d of them in inlined calls (runtime.text %#x, .text %#x)",
		len(seen), inlined, tab.Text, ef.Section(".text").Addr)
}

// TestCgoLinkModes: testdata/cgo-work built by testutil.GoToolchains (Go
// 1.16 to the newest the module registry serves, and the machine's own), linked internally,
// externally, as PIE and with -s -w: each function the program names with
// the runtime's FuncForPC is at the runtime's entry in the table, and the
// table names the function at an address inside it.
func TestCgoLinkModes(t *testing.T) {
	n := 0
	for _, tc := range testutil.GoToolchains {
		for _, mode := range testutil.GoLinkModes {
			bin := testutil.BuildCgoWork(t, tc, mode)
			want := testutil.CgoWorkFuncs(t, bin)
			ef, err := elfx.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := pcln.Open(ef)
			ef.Close()
			if err != nil {
				t.Fatalf("%s %s: %v", tc, mode, err)
			}
			for _, w := range want {
				n++
				if f := tab.Lines.LookupFunc(w.Name); f == nil || f.Entry != w.Addr {
					t.Errorf("%s %s: %s: the runtime says %#x, the table %v", tc, mode, w.Name, w.Addr, f)
				}
				if f := tab.Lines.PCToFunc(w.Addr + 1); f == nil || f.Name != w.Name {
					t.Errorf("%s %s: %#x: the runtime says %s, the table %v", tc, mode, w.Addr+1, w.Name, f)
				}
			}
		}
	}
	if n < 8*len(testutil.GoToolchains)*len(testutil.GoLinkModes) {
		t.Fatalf("only %d functions compared", n)
	}
}
