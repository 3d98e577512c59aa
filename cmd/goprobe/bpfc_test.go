package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/spec"
)

// genBPF generates the bpf-c program and the spec for defs, compiles the
// program with clang -target bpf and returns the object and the spec.
func genBPF(t *testing.T, bin string, defs ...string) (string, *spec.Spec) {
	t.Helper()
	clang, err := exec.LookPath("clang")
	if err != nil {
		testutil.Skipf(t, "clang not installed: %v", err)
	}
	code, src, errs := runGoprobe(append([]string{"gen", "--format=bpf-c", "-x", bin}, defs...)...)
	if code != 0 {
		t.Fatalf("bpf-c: exit %d: %s", code, errs)
	}
	code, js, errs := runGoprobe(append([]string{"gen", "--format=spec", "-x", bin}, defs...)...)
	if code != 0 {
		t.Fatalf("spec: exit %d: %s", code, errs)
	}
	spec, err := spec.ReadSpec(strings.NewReader(js), "spec")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "probe.bpf.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "probe.bpf.o")
	if out, err := exec.Command(clang, "-O2", "-g", "-target", "bpf", "-c", c, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s\n%s", err, out, src)
	}
	return obj, spec
}

// loadBPF loads an object into the kernel: the verifier accepts it.
func loadBPF(t *testing.T, obj string) *ebpf.Collection {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "loading BPF needs root")
	}
	cs, err := ebpf.LoadCollectionSpec(obj)
	if err != nil {
		t.Fatal(err)
	}
	coll, err := ebpf.NewCollection(cs)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("verifier: %+v", ve)
		}
		t.Fatal(err)
	}
	t.Cleanup(coll.Close)
	return coll
}

// TestBPFCLoad: the generated program compiles and the kernel's verifier
// loads it, for Go (client_golang's counter, through two pointers to a Go
// string), Rust and Zig fixtures.
func TestBPFCLoad(t *testing.T) {
	root := testutil.Root(t)
	for _, tc := range []struct {
		name string
		bin  func(t *testing.T) string
		defs []string
	}{
		{"go-prom", func(t *testing.T) string { return testutil.Fixture(t, "go-prom").Path },
			[]string{"github.com/prometheus/client_golang/prometheus.(*counter).Add c->valInt name=c->desc->fqName v", "github.com/prometheus/client_golang/prometheus.(*gauge).Set g->valBits"}},
		{"rust", func(t *testing.T) string {
			return buildWith(t, root, "rustc", "-C", "opt-level=2", "-g", "-o", "BIN", filepath.Join(root, "dwarf", "testdata", "inline", "inl.rs"))
		}, []string{"inl::work n", "inl::mix x"}},
		{"zig", func(t *testing.T) string {
			return buildWith(t, root, "zig", "build-exe", "-O", "ReleaseSafe", "-femit-bin=BIN", filepath.Join(root, "dwarf", "testdata", "inline", "inl.zig"))
		}, []string{"inl.work n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, _ := genBPF(t, tc.bin(t), tc.defs...)
			loadBPF(t, obj)
		})
	}
}

// attachBPF attaches each program of probe 0 of a bpf-c object at its
// site's file offset in bin.
func attachBPF(t *testing.T, coll *ebpf.Collection, bin string, sp *spec.Spec) {
	t.Helper()
	ex, err := link.OpenExecutable(bin)
	if err != nil {
		t.Fatal(err)
	}
	for j, site := range sp.Probes[0].Sites {
		l, err := ex.Uprobe("", coll.Programs[fmt.Sprintf("p0_s%d", j)], &link.UprobeOptions{Address: site.FileOffset})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
}

// buildWith runs a compiler whose output argument is BIN and returns it.
func buildWith(t *testing.T, root, tool string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		testutil.Skipf(t, "%s not installed: %v", tool, err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "BIN", bin)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
	return bin
}

// TestBPFCRun: the generated program, attached by cilium/ebpf at the
// spec's file offsets, counts every call of maybe_alloc (three inline
// expansions of its head) and reads the arguments the program says it
// passed.
func TestBPFCRun(t *testing.T) {
	bin := buildCount(t, "c")
	obj, spec := genBPF(t, bin, "maybe_alloc i n")
	coll := loadBPF(t, obj)
	attachBPF(t, coll, bin, spec)
	rd, err := ringbuf.NewReader(coll.Maps["events"])
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	out, err := exec.Command(bin, "6").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	said := map[string]int{}
	for _, m := range regexp.MustCompile(`called maybe_alloc\((-?\d+), (\d+)\)`).FindAllStringSubmatch(string(out), -1) {
		said[m[1]+","+m[2]]++
	}
	var n uint64
	if err := coll.Maps["counts"].Lookup(uint32(0), &n); err != nil {
		t.Fatal(err)
	}
	if n != 18 || len(said) != 18 {
		t.Fatalf("counted %d calls; the program made %d:\n%s", n, len(said), out)
	}
	saw := map[string]int{}
	rd.SetDeadline(time.Now().Add(2 * time.Second))
	for i := uint64(0); i < n; i++ {
		rec, err := rd.Read()
		if err != nil {
			t.Fatalf("after %d events: %v", i, err)
		}
		// probe, site, pid_tgid, time_ns, ok; then 8+64 bytes per argument.
		var hdr struct {
			Probe, Site   uint32
			PidTgid, Time uint64
			OK, I         uint64
			IData         [64]byte
			N             uint64
		}
		if err := binary.Read(bytes.NewReader(rec.RawSample), binary.LittleEndian, &hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.OK != 3 {
			t.Errorf("site %d: arguments read: %b", hdr.Site, hdr.OK)
		}
		saw[fmt.Sprintf("%d,%d", int64(hdr.I), hdr.N)]++
	}
	if fmt.Sprint(said) != fmt.Sprint(saw) {
		t.Errorf("the program passed %v; the probes read %v", said, saw)
	}
}
