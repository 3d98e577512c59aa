package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/spec"
)

// markSpec builds probe/testdata/mark (gcc -O0: a frame pointer, so the
// canonical frame address is RBP+16 in the loop's body) and a spec whose
// probe "marked" has two starts with a per-thread mark in the loop and its
// clear at the loop's end (see spec.Mark); it returns the binary, the
// spec and the calls the program makes with argument arg.
func markSpec(t *testing.T, arg string) (string, *spec.Spec, int) {
	t.Helper()
	root := testutil.Root(t)
	bin := buildWith(t, root, "gcc", "-O0", "-g", "-o", "BIN", filepath.Join(root, "probe", "testdata", "mark", "mark.c"))
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	code, js, errs := runGoprobe("gen", "--format=spec", "-x", bin, "body")
	if code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	sp, err := spec.ReadSpec(strings.NewReader(js), "spec")
	if err != nil {
		t.Fatal(err)
	}
	text := ef.Section(".text")
	site := func(kind, name string, start, clear bool) spec.Site {
		for _, s := range syms {
			if s.Name == name {
				off := s.Value - text.Addr + text.Offset
				m := &spec.Mark{Group: 1, Start: start, Clear: clear, CFAReg: "RBP", CFAOff: 16}
				return spec.Site{Kind: kind, Function: "body", Addr: s.Value, FileOffset: off, Mark: m}
			}
		}
		t.Fatalf("no %s in %s", name, bin)
		return spec.Site{}
	}
	sp.Probes = []spec.Probe{{Def: "marked", Function: "body", Lang: "c", Sites: []spec.Site{
		site(spec.SiteInline, "mark_a", true, false),
		site(spec.SiteInline, "mark_b", true, false),
		site(spec.SiteClear, "mark_end", false, true),
	}}}
	out, err := exec.Command(bin, arg).Output()
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	if _, err := fmt.Sscanf(string(out), "calls %d", &calls); err != nil || calls < 40 {
		t.Fatalf("the program said %q", out)
	}
	return bin, sp, calls
}

// TestMarkBpftrace: the bpftrace script of marked starts counts each call
// once, as the program counts them.
func TestMarkBpftrace(t *testing.T) {
	needBPF(t)
	bpftrace, err := exec.LookPath("bpftrace")
	if err != nil {
		testutil.Skipf(t, "bpftrace not installed: %v", err)
	}
	bin, sp, calls := markSpec(t, "30")
	stripped := bin + ".stripped"
	if out, err := exec.Command("strip", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	var script strings.Builder
	if err := codegen.WriteBpftrace(&script, sp, &codegen.BpftraceOptions{Target: stripped, FileOffsets: true}); err != nil {
		t.Fatal(err)
	}
	bt := filepath.Join(t.TempDir(), "mark.bt")
	if err := os.WriteFile(bt, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bpftrace, "--unsafe", bt, "-c", stripped+" 30").CombinedOutput()
	if err != nil {
		t.Fatalf("bpftrace: %v\n%s\n%s", err, out, script.String())
	}
	m := regexp.MustCompile(`@\["?marked"?\]: (\d+)`).FindStringSubmatch(string(out))
	if m == nil || m[1] != fmt.Sprint(calls) {
		t.Errorf("the program made %d calls; bpftrace:\n%s\n%s", calls, out, script.String())
	}
}

// TestMarkBPFC: the bpf-c program of marked starts compiles, loads, and
// counts each call once, as the program counts them.
func TestMarkBPFC(t *testing.T) {
	needBPF(t)
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	bin, sp, calls := markSpec(t, "30")
	var src strings.Builder
	if err := codegen.WriteBPFC(&src, sp, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, obj := filepath.Join(dir, "mark.bpf.c"), filepath.Join(dir, "mark.bpf.o")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(clang, "-O2", "-g", "-target", "bpf", "-c", c, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s\n%s", err, out, src.String())
	}
	coll := loadBPF(t, obj)
	attachBPF(t, coll, bin, sp)
	if out, err := exec.Command(bin, "30").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var n uint64
	if err := coll.Maps["counts"].Lookup(uint32(0), &n); err != nil {
		t.Fatal(err)
	}
	if n != uint64(calls) {
		t.Errorf("the program made %d calls; the bpf-c program counted %d", calls, n)
	}
}

// TestMarkPerf: perf probe cannot keep the mark: the commands add the two
// starts, not the clear, and say that a call passing both counts twice.
func TestMarkPerf(t *testing.T) {
	_, spec, _ := markSpec(t, "30")
	var b strings.Builder
	if err := codegen.WritePerf(&b, spec); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "perf probe -q -x"); n != 2 {
		t.Errorf("%d probes added, want the 2 starts:\n%s", n, out)
	}
	if n := strings.Count(out, "cannot keep goprobe's per-thread mark"); n != 2 {
		t.Errorf("%d notes of the mark, want one per start:\n%s", n, out)
	}
}
