package pcln_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/internal/testutil"
)

// TestGoWrappers: testdata/cgo-work built by every Go of
// testutil.GoToolchains (whose wrappers' function ID moved from 22 to 21,
// 22 and 23), with DWARF and stripped, writes its own goroutine profile
// while a goroutine waits in waiter.Wait, called through the wrapper
// (*waiter).Wait with Wait inlined into it: at every address of the
// program in it the model's Traceback gives the runtime's frames, at the
// waiting one main.waiter.Wait alone (the wrapper left out), and the
// table marks (*waiter).Wait, and no function the runtime shows, as a
// wrapper.
func TestGoWrappers(t *testing.T) {
	for _, tc := range testutil.GoToolchains {
		for _, mode := range []string{"internal", "stripped"} {
			bin := testutil.BuildCgoWork(t, tc, mode)
			prof := filepath.Join(t.TempDir(), "goroutine.pb")
			if out, err := exec.Command(bin, "profile", prof).CombinedOutput(); err != nil {
				t.Fatalf("%s %s profile: %v\n%s", tc, mode, err, out)
			}
			pr := testutil.ReadProfile(t, prof)
			m, err := code.Open(bin, nil)
			if err != nil {
				t.Fatal(err)
			}
			ef, err := elfx.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := pcln.Open(ef)
			ef.Close()
			if err != nil {
				t.Fatal(err)
			}
			wrappers := tab.Wrappers()
			n, elided := 0, 0
			for _, s := range pr.Sample {
				callee := ""
				for _, loc := range s.Location {
					fn := tab.Lines.PCToFunc(loc.Address)
					if len(loc.Line) == 0 || loc.Mapping == nil || loc.Mapping.File != bin || fn == nil {
						continue
					}
					want := testutil.Frames(loc)
					var got []string
					for _, f := range m.Traceback(loc.Address, callee) {
						got = append(got, f.Name)
					}
					n++
					if !slices.Equal(want, got) {
						t.Errorf("%s %s: %#x: the runtime's frames %v, the model's %v", tc, mode, loc.Address, want, got)
					}
					if fn.Name == "main.(*waiter).Wait" && wrappers[fn.Entry] && slices.Equal(want, []string{"main.waiter.Wait"}) {
						elided++
					}
					if wrappers[fn.Entry] && fn.Name == want[len(want)-1] {
						t.Errorf("%s %s: %#x: %s is marked a wrapper, but the runtime shows it", tc, mode, loc.Address, fn.Name)
					}
					callee = fn.Name
				}
			}
			m.Close()
			if n < 5 || elided != 1 {
				t.Errorf("%s %s: %d addresses of the program compared, %d in waiter.Wait within its wrapper (want 1)", tc, mode, n, elided)
			}
		}
	}
}
