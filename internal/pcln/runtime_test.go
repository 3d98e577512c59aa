package pcln_test

import (
	"io"
	"net/http"
	"os/exec"
	"slices"
	"testing"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/pcln"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/google/pprof/profile"
)

// TestPrometheusRuntimeAddresses: Debian's /usr/bin/prometheus (go1.19,
// cgo, external linking, stripped) symbolizes its own goroutine, heap,
// allocs and CPU profiles with the runtime's tables while the test drives
// queries at it; every address in them lies in the function of that name
// in the table Open reads, or in a wrapper the runtime leaves out, and
// the model of code's Traceback gives it the runtime's inline chain (Go
// 1.19's inline tree; (*encoderCloser).Encode, a wrapper with
// encoderCloser.Encode inlined, is the runtime's encoderCloser.Encode).
// A location's address is the frame's PC as runtime.CallersFrames gives
// it: inside the call for a caller, the instruction sampled for a CPU
// profile's leaf, the entry of a goroutine not started yet. Counting from
// the ELF .text start (0x100 below runtime.text in this binary) fails
// this, and so does looking up a byte before the address.
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
	wrappers := tab.Wrappers()
	stop := driveQueries(p.Addr)
	defer stop()
	seen := map[uint64]bool{}
	inlined, elided := 0, 0
	check := func(loc *profile.Location, callee string) {
		want := testutil.Frames(loc) // innermost first
		var got []string
		for _, f := range m.Traceback(loc.Address, callee) {
			got = append(got, f.Name)
		}
		if !slices.Equal(want, got) {
			t.Errorf("%#x: the runtime's frames %v, the model's %v", loc.Address, want, got)
		}
		if len(want) > 1 {
			inlined++
		}
		fn := tab.Lines.PCToFunc(loc.Address)
		switch {
		case fn == nil:
			t.Errorf("%#x: the runtime says %s, the table nothing", loc.Address, want[len(want)-1])
		case wrappers[fn.Entry] && !slices.Contains(want, fn.Name):
			elided++ // the runtime left the wrapper out
		case fn.Name != want[len(want)-1]:
			t.Errorf("%#x: the runtime says %s, the table %s", loc.Address, want[len(want)-1], fn.Name)
		}
	}
	// Go's sampling decides how many addresses the goroutine, heap and
	// allocs profiles hold (150-190 on an idle server, 9-18 of them in
	// inlined calls); CPU profiles of the queries add to them until both
	// minimums are met, under any load.
	profs := []string{"goroutine", "heap", "allocs"}
	for round := 0; round < 12 && (len(seen) < 100 || inlined < 10 || round < 4); round++ {
		if round >= len(profs) {
			profs = append(profs, "profile?seconds=2")
		}
		pr, err := testutil.FetchProfile("http://" + p.Addr + "/debug/pprof/" + profs[round])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range pr.Sample {
			callee := "" // the function the frame called: the next inner one's
			for _, loc := range s.Location {
				if len(loc.Line) > 0 && loc.Mapping != nil && loc.Mapping.File == bin && !seen[loc.Address] {
					seen[loc.Address] = true
					check(loc, callee)
				}
				callee = ""
				if fn := tab.Lines.PCToFunc(loc.Address); fn != nil {
					callee = fn.Name
				}
			}
		}
	}
	if len(seen) < 100 || inlined < 10 {
		t.Fatalf("only %d addresses of prometheus's own profiles compared, %d in inlined calls", len(seen), inlined)
	}
	t.Logf("%d addresses of prometheus's profiles in the runtime's function and inline chain, %d of them in inlined calls, %d in wrappers the runtime leaves out (runtime.text %#x, .text %#x)",
		len(seen), inlined, elided, tab.Text, ef.Section(".text").Addr)
}

// driveQueries has the server at addr answer queries, its own metrics and
// a PromQL query, until the returned function is called.
func driveQueries(addr string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			for _, q := range []string{"/metrics", "/api/v1/query?query=rate(prometheus_http_requests_total[1m])", "/api/v1/label/__name__/values"} {
				select {
				case <-done:
					return
				default:
				}
				if resp, err := http.Get("http://" + addr + q); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
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
