package stack

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/unwind"
)

//go:noinline
func here() uintptr {
	pc, _, _, _ := runtime.Caller(0)
	return pc
}

// TestSymbolizeSelf: addresses of this very process, read through its
// mappings, are named as the Go runtime names them.
func TestSymbolizeSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	ms, err := ProcMappings(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	sym := NewSymbolizer()
	for _, pc := range []uintptr{reflect.ValueOf(TestSymbolizeSelf).Pointer(), here(), reflect.ValueOf(strings.ToUpper).Pointer()} {
		want := runtime.FuncForPC(pc).Name()
		frames := sym.User(ms, uint64(pc), false)
		if got := frames[0].Name; got != want {
			t.Errorf("%#x: %q, the runtime says %q", pc, got, want)
		}
		// A return address just past a call is named by the call.
		if got := sym.User(ms, uint64(pc)+1, true)[0].Name; got != want {
			t.Errorf("%#x+1 as a return address: %q, want %q", pc, got, want)
		}
	}
	if f := sym.User(ms, 8, false); len(f) != 1 || !strings.HasPrefix(f[0].Name, "0x") {
		t.Errorf("an unmapped address: %+v", f)
	}
}

// TestTables: a C program's .eh_frame compiles into rows in address
// order, after the frame-pointer row; the value of the running program
// lists its module and the C library's, with their rows' ranges.
func TestTables(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("x86-64 Linux")
	}
	bin := buildC(t, "int main(int argc, char **argv) { volatile long n = 0; while (argc == 1) n++; return 0; }\n")
	a, _ := arch.ForMachine(62)
	tb := NewTables(a)
	lo, hi := tb.Add(bin)
	if hi <= lo+2 {
		t.Fatalf("%d rows for %s (%v)", hi-lo, bin, tb.Failed)
	}
	if tb.Rows[0] != unwind.FPRow || tb.Rows[lo] != unwind.FPRow {
		t.Errorf("rows 0 and %d: %+v %+v, want the frame-pointer row", lo, tb.Rows[0], tb.Rows[lo])
	}
	for i := lo + 1; i < hi; i++ {
		if tb.Rows[i].PC <= tb.Rows[i-1].PC {
			t.Fatalf("row %d at %#x after %#x", i, tb.Rows[i].PC, tb.Rows[i-1].PC)
		}
	}
	cmd := exec.Command(bin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var ms []Mapping
	for i := 0; i < 200 && len(ms) < 3; i++ { // the program, the C library, the loader
		ms, _ = ProcMappings(cmd.Process.Pid)
		time.Sleep(5 * time.Millisecond)
	}
	v := tb.ProcValue(ms)
	listed := map[string]bool{}
	for m := 0; m < unwind.MaxModules; m++ {
		o := m * unwind.ModuleSize
		start, rows := binary.LittleEndian.Uint64(v[o:]), binary.LittleEndian.Uint64(v[o+24:])
		for _, mp := range ms {
			if mp.Start == start && rows != 0 {
				listed[filepath.Base(mp.Path)] = true
			}
		}
		if start != 0 && uint32(rows) == lo && uint32(rows>>32) != hi {
			t.Errorf("the program's rows: [%d, %d), want [%d, %d)", uint32(rows), rows>>32, lo, hi)
		}
	}
	if !listed[filepath.Base(bin)] || !listed["libc.so.6"] {
		t.Errorf("listed %v of %+v", listed, ms)
	}
}

// buildC compiles a C program.
func buildC(t *testing.T, src string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "m.c"), []byte(src), 0o644)
	bin := filepath.Join(dir, "m")
	if out, err := exec.Command(gcc, "-O2", "-o", bin, filepath.Join(dir, "m.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	return bin
}

// TestLoadedFiles: a C program's files in the dynamic loader's order: the
// program, the C library, the loader after it.
func TestLoadedFiles(t *testing.T) {
	bin := buildC(t, "int main(void) { return 0; }\n")
	got := LoadedFiles(bin)
	pos := func(base string) int {
		for i, p := range got {
			if strings.HasPrefix(filepath.Base(p), base) {
				return i
			}
		}
		return -1
	}
	if got[0] != bin || pos("libc.so") < 1 || pos("ld-linux") <= pos("libc.so") {
		t.Errorf("LoadedFiles: %v", got)
	}
}
