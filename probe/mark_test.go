package probe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/spec"
)

// TestMarkExits: in a loop (1..6 -> 1) whose body passes the start 2, the
// caller's 3, then the start 4 or skips it (3 -> 5), the call is over at 4
// (the last start clears the mark as it tests it) or at 5 when 4 is
// skipped, not at 3: no exit between two starts of one call, and one on
// every way around the loop.
func TestMarkExits(t *testing.T) {
	addrs := []uint64{0, 1, 2, 3, 4, 5, 6, 7}
	fl := linear(addrs, map[uint64][]uint64{3: {5}, 6: {1}}, map[uint64]bool{7: true})
	rs := [][2]uint64{{2, 3}, {4, 5}}
	got := fl.markExits(rs, []uint64{2, 4})
	if len(got) != 2 || got[0] != 4 || got[1] != 5 {
		t.Errorf("exits %v, want [4 5]", got)
	}
}

// TestMarkLatches: two copies of a loop of calls, one after the other
// (1..3 -> 1, then 4..7 -> 4), one DIE holding both (clang -O2 seed 1357):
// the start 5 of the second can follow every instruction of the first, so
// no exit lies in it, and the mark of its first call would keep its other
// iterations from counting; the latch 3, code of the caller of a loop that
// holds the start 1 alone, clears it, and so does the second loop's latch
// 7.
func TestMarkLatches(t *testing.T) {
	addrs := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	fl := linear(addrs, map[uint64][]uint64{3: {1}, 7: {4}}, map[uint64]bool{9: true})
	rs := [][2]uint64{{1, 3}, {5, 7}}
	got := fl.markExits(rs, []uint64{1, 5})
	for _, want := range []uint64{3, 7} {
		if !contains(got, want) {
			t.Errorf("exits %v: no %d", got, want)
		}
	}
	if contains(got, 2) || contains(got, 1) {
		t.Errorf("exits %v: one inside the first loop's call", got)
	}
}

// TestMarkCounts attaches starts with a per-thread mark to a program whose
// loop passes one start or two per iteration (a "call"), and recurses
// between the two: each call counts once, as the program counts them,
// with the clear at the loop's end the program marks, and with the exits
// placement finds from the control flow; without the mark, calls that pass
// both starts count twice.
func TestMarkCounts(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "probing needs root")
	}
	bin := filepath.Join(t.TempDir(), "mark")
	if out, err := exec.Command("gcc", "-O0", "-g", "-o", bin, filepath.Join("testdata", "mark", "mark.c")).CombinedOutput(); err != nil {
		testutil.Skipf(t, "gcc: %v %s", err, out)
	}
	r := openResolver(t, bin)
	if err := r.t.all(); err != nil {
		t.Fatal(err)
	}
	syms, err := r.t.ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]uint64{}
	for _, s := range syms {
		at[s.Name] = s.Value
	}
	a, b, end := at["mark_a"], at["mark_b"], at["mark_end"]
	if a == 0 || b == 0 || end == 0 {
		t.Fatalf("no mark_a, mark_b or mark_end in %s", bin)
	}
	body, err := r.t.lookup("body")
	if err != nil || len(body.Instances) == 0 {
		t.Fatalf("body: %v", err)
	}
	fl, err := r.flows.of(body.Instances[0])
	if err != nil {
		t.Fatal(err)
	}
	site := func(kind string, addr uint64, m *spec.Mark) spec.Site {
		off, err := r.t.ef.FileOffset(addr)
		if err != nil {
			t.Fatal(err)
		}
		return spec.Site{Kind: kind, Function: "body", Addr: addr, FileOffset: off, Mark: m}
	}
	mark := func(addr uint64, group uint32, start, clear bool) *spec.Mark {
		m := r.frames.mark(addr)
		m.Group, m.Start, m.Clear = group, start, clear
		if m.CFAReg == "" {
			t.Fatalf("no CFA rule at %#x", addr)
		}
		return m
	}
	sp := &spec.Spec{Version: spec.SpecVersion, Binary: bin, BuildID: r.t.ef.BuildID, Arch: "x86_64"}
	// The program's own end of a call.
	sp.Probes = append(sp.Probes, spec.Probe{Def: "marked", Function: "body", Lang: "c", Sites: []spec.Site{
		site(spec.SiteInline, a, mark(a, 1, true, false)),
		site(spec.SiteInline, b, mark(b, 1, true, false)),
		site(spec.SiteClear, end, mark(end, 1, false, true)),
	}})
	// Placement's exits.
	rs := [][2]uint64{{a, a + 1}, {b, b + 1}}
	starts, ok := r.placer.markStarts(fl, rs, []uint64{a, b})
	if !ok {
		t.Fatal("no exits")
	}
	var placed []spec.Site
	for _, st := range starts {
		st.mark.Group = 2
		kind := spec.SiteInline
		if !st.mark.Start {
			kind = spec.SiteClear
		}
		placed = append(placed, site(kind, st.addr, st.mark))
	}
	sortSites(placed)
	sp.Probes = append(sp.Probes, spec.Probe{Def: "placed", Function: "body", Lang: "c", Sites: placed})
	sp.Probes = append(sp.Probes, spec.Probe{Def: "unmarked", Function: "body", Lang: "c", Sites: []spec.Site{
		site(spec.SiteInline, a, nil), site(spec.SiteInline, b, nil),
	}})
	s, err := attach.Probes(sp, bin, nil)
	if err != nil {
		testutil.Skipf(t, "attach: %v", err)
	}
	defer s.Close()
	out, err := exec.Command(bin, "30").Output()
	if err != nil {
		t.Fatal(err)
	}
	var calls uint64
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "calls %d", &calls); err != nil || calls < 40 {
		t.Fatalf("the program said %q", out)
	}
	hits, _, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if hits[0] != calls || hits[1] != calls {
		t.Errorf("the program made %d calls; counted with its own clear %d, with placement's %d exits %d", calls, hits[0], len(placed)-2, hits[1])
	}
	if hits[2] <= calls {
		t.Errorf("without the mark %d hits for %d calls: the test cannot tell a double count", hits[2], calls)
	}
}
