package usdt

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/testutil"
)

// readelfProbes are the probes readelf -n prints: provider, name,
// location, semaphore and operands, one line each.
func readelfProbes(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("readelf", "-n", path).Output()
	if err != nil {
		testutil.Skipf(t, "readelf: %v", err)
	}
	re := regexp.MustCompile(`Provider: (\S+)\s+Name: (\S+)\s+Location: (0x[0-9a-f]+), Base: (0x[0-9a-f]+), Semaphore: (0x[0-9a-f]+)\s+Arguments: ?([^\n]*)`)
	var lines []string
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		loc, _ := strconv.ParseUint(m[3], 0, 64)
		sem, _ := strconv.ParseUint(m[5], 0, 64)
		lines = append(lines, fmt.Sprintf("%s:%s %#x %#x %s", m[1], m[2], loc, sem, strings.TrimSpace(m[6])))
	}
	return lines
}

// sdtProgram builds cmd/goprobe/testdata/sdt.c with opt.
func sdtProgram(t *testing.T, opt string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sdt")
	src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", "sdt.c")
	if out, err := exec.Command("gcc", opt, "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// TestReadAgreesWithReadelf: every probe of python3.11, libstdc++ and a
// sys/sdt.h program at -O0 and -O2, as readelf -n prints it (none of
// these is prelinked: the location is the note's).
func TestReadAgreesWithReadelf(t *testing.T) {
	files := []string{"/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", sdtProgram(t, "-O0"), sdtProgram(t, "-O2")}
	total := 0
	for _, path := range files {
		if _, err := os.Stat(path); err != nil {
			testutil.Skipf(t, "%s: %v", path, err)
		}
		want := readelfProbes(t, path)
		ef, err := elfx.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := Read(ef)
		ef.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, fmt.Sprintf("%s %#x %#x %s", p.String(), p.Addr, p.Semaphore, p.Operands))
			for _, a := range p.Args {
				if a.Unreadable != "" {
					t.Errorf("%s: %s: %s", path, p.String(), a.Unreadable)
				}
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n%s\nreadelf:\n%s", path, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		total += len(got)
	}
	// python3.11 (Debian's 3.11.2): 8, readelf -n counts them; libstdc++:
	// 3; the program: 4 at each level.
	if total != 8+3+4+4 {
		t.Errorf("%d probes, want 19", total)
	}
}

// TestParseArg reads each operand form sys/sdt.h writes on x86-64.
func TestParseArg(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"8@%rax", "reg RAX u64"},
		{"-4@%eax", "reg RAX s32"},
		{"-4@%ebp", "reg RBP s32"},
		{"1@%sil", "reg RSI u8"},
		{"-2@%r9w", "reg R9 s16"},
		{"4@%r12d", "reg R12 u32"},
		{"-4@$5", "const 5 s32"},
		{"-4@$-1", "const -1 s32"},
		{"8@$0x10", "const 16 u64"},
		{"-4@-20(%rbp)", "mem RBP+-20 s32"},
		{"8@(%rdi)", "mem RDI+0 u64"},
		{"8@-80(%rbx)", "mem RBX+-80 u64"},
		{"-4@112(%rsp)", "mem RSP+112 s32"},
		{"8@16(%rax,%rbx,8)", "mem RAX+16 [RBX*8] u64"},
		{"4@counter+8(%rip)", "mem RIP+8 sym counter u32"},
		{"4@counter(%rip)", "mem RIP+0 sym counter u32"},
		{"%rdi", "reg RDI u64"},
		{"1@%ah", "unreadable"},
		{"3@%rax", "unreadable"},
		{"8@%xmm0", "unreadable"},
		{"8@foo", "unreadable"},
		{"8@foo(%rax)", "unreadable"},
	} {
		a := ParseArg(tc.in, elf.EM_X86_64)
		var got string
		switch a.Kind {
		case ArgReg:
			got = fmt.Sprintf("reg %s %s", a.Reg, a.Type())
		case ArgConst:
			got = fmt.Sprintf("const %d %s", a.Const, a.Type())
		case ArgMem:
			got = fmt.Sprintf("mem %s+%d", a.Reg, a.Offset)
			if a.Index != "" {
				got += fmt.Sprintf(" [%s*%d]", a.Index, a.Scale)
			}
			if a.Symbol != "" {
				got += " sym " + a.Symbol
			}
			got += " " + a.Type()
		default:
			got = "unreadable"
			if a.Unreadable == "" {
				t.Errorf("%s: no reason", tc.in)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestPrelinkAdjusted: a prelinker moves a file's sections after the
// notes were written, so a note's addresses are the ones before the move
// and its base differs from .stapsdt.base's address by the move. A copy
// of the sys/sdt.h program whose notes say the file was linked 0x10000
// lower reads back, adjusted, as readelf -n reads the original.
func TestPrelinkAdjusted(t *testing.T) {
	bin := sdtProgram(t, "-O2")
	want := readelfProbes(t, bin)
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	sec := ef.Section(".note.stapsdt")
	if sec == nil {
		t.Fatal("no .note.stapsdt")
	}
	const moved = 0x10000
	bo := ef.ByteOrder
	notes := 0
	for off := int(sec.Offset); off < int(sec.Offset+sec.Size); {
		namesz, descsz := int(bo.Uint32(b[off:])), int(bo.Uint32(b[off+4:]))
		desc := off + 12 + align4(namesz)
		for k := 0; k < 3; k++ { // location, base, semaphore
			at := desc + 8*k
			if v := bo.Uint64(b[at:]); v != 0 {
				bo.PutUint64(b[at:], v-moved)
			}
		}
		notes++
		off = desc + align4(descsz)
	}
	ef.Close()
	moved1 := filepath.Join(t.TempDir(), "prelinked")
	if err := os.WriteFile(moved1, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if out := readelfProbes(t, moved1); len(out) != notes || out[0] == want[0] {
		t.Fatalf("the copy's notes were not moved: %v", out)
	}
	f, err := elfx.Open(moved1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%s %#x %#x %s", p.String(), p.Addr, p.Semaphore, p.Operands))
	}
	if notes < 4 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("read from the moved notes:\n%s\nreadelf on the original:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
