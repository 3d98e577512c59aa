package flame

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/types"
)

// goFrames are frames of Go functions in module "app".
func goFrames(names ...string) []stack.Frame {
	fs := make([]stack.Frame, len(names))
	for i, n := range names {
		fs[i] = stack.Frame{Name: n, Module: "app", Lang: types.LangGo}
	}
	return fs
}

const cxxName = `std::vector<std::pair<int, char const*>, std::allocator<std::pair<int, char const*> > >::operator[](unsigned long) const &`

// small is a profile with every kind of frame: 80 samples in main.inner
// (10 of them in an inline expansion), 20 in main.other (5 in the kernel),
// and a Rust, a C++, a C and an unsymbolized frame.
func small() []stack.Stack {
	inl := append(goFrames("main.main", "main.outer", "main.inner"), stack.Frame{Name: "main.helper", Module: "app", Lang: types.LangGo, Inlined: true})
	sys := append(goFrames("main.main", "main.other"),
		stack.Frame{Name: "write", Module: "libc.so.6", Lang: types.LangC},
		stack.Frame{Name: "entry_SYSCALL_64", Module: "[kernel]", Kernel: true},
		stack.Frame{Name: "ksys_write", Module: "[kernel]", Kernel: true})
	rust := append(goFrames("main.main", "main.other"),
		stack.Frame{Name: "<alloc::vec::Vec<T> as core::ops::Drop>::drop", Module: "librs.so", Lang: types.LangRust},
		stack.Frame{Name: cxxName, Module: "libcxx.so", Lang: types.LangCPlusPlus},
		stack.Frame{Name: "libcxx.so+0x1f2c", Module: "libcxx.so"})
	return []stack.Stack{
		{Frames: goFrames("main.main", "main.outer", "main.inner"), Count: 70},
		{Frames: inl, Count: 10},
		{Frames: goFrames("main.main", "main.other"), Count: 10},
		{Frames: sys, Count: 5},
		{Frames: rust, Count: 5},
	}
}

func TestFoldedRoundTrip(t *testing.T) {
	in := append(small(),
		stack.Stack{Frames: goFrames("main.main", "main.outer", "main.inner"), Count: 1}, // merged with the first
		stack.Stack{Frames: goFrames("main.main", "main.never"), Count: 0},               // no samples: left out
		stack.Stack{Count: 3}) // no frames: left out
	var b bytes.Buffer
	if err := WriteFolded(&b, in); err != nil {
		t.Fatal(err)
	}
	want := "main.main;main.other 10\n" +
		"main.main;main.other;<alloc::vec::Vec<T> as core::ops::Drop>::drop;" + cxxName + ";libcxx.so+0x1f2c 5\n" +
		"main.main;main.other;write;entry_SYSCALL_64_[k];ksys_write_[k] 5\n" +
		"main.main;main.outer;main.inner 71\n" +
		"main.main;main.outer;main.inner;main.helper_[i] 10\n"
	if b.String() != want {
		t.Fatalf("folded:\n%s\nwant:\n%s", b.String(), want)
	}
	testutil.Golden(t, "flame/testdata/small.folded", b.Bytes())

	got, err := ReadFolded(&b)
	if err != nil {
		t.Fatal(err)
	}
	// The format keeps names and kinds; modules survive only as [kernel].
	strip := func(fs []stack.Frame) []stack.Frame {
		out := make([]stack.Frame, len(fs))
		for i, f := range fs {
			out[i] = stack.Frame{Name: f.Name, Kernel: f.Kernel, Inlined: f.Inlined}
			if f.Kernel {
				out[i].Module = "[kernel]"
			}
		}
		return out
	}
	s := small()
	wantStacks := []stack.Stack{
		{Frames: strip(s[2].Frames), Count: 10},
		{Frames: strip(s[4].Frames), Count: 5},
		{Frames: strip(s[3].Frames), Count: 5},
		{Frames: strip(s[0].Frames), Count: 71},
		{Frames: strip(s[1].Frames), Count: 10},
	}
	if !reflect.DeepEqual(got, wantStacks) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", got, wantStacks)
	}
	var again bytes.Buffer
	if err := WriteFolded(&again, got); err != nil {
		t.Fatal(err)
	}
	if again.String() != want {
		t.Errorf("written again:\n%s\nwant:\n%s", again.String(), want)
	}
}

func TestFoldedCleansNames(t *testing.T) {
	var b bytes.Buffer
	err := WriteFolded(&b, []stack.Stack{{Frames: []stack.Frame{{Name: "a;b"}, {Name: "two\nlines\r"}, {Name: "tab\there"}}, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a:b;two lines ;tab here 2\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	got, err := ReadFolded(&b)
	if err != nil {
		t.Fatal(err)
	}
	want := []stack.Stack{{Frames: []stack.Frame{{Name: "a:b"}, {Name: "two lines "}, {Name: "tab here"}}, Count: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v, want %+v", got, want)
	}
}

// TestReadFoldedCollapsed reads what collapsing perf script output gives:
// process names first, tabs or spaces before the count, CRLF, blank lines,
// repeated stacks.
func TestReadFoldedCollapsed(t *testing.T) {
	in := "app;_start;main;compute 120\r\n" +
		"\n" +
		"app;_start;main;[unknown] 3\n" +
		"swapper;secondary_startup_64_[k];do_idle_[k]\t40\n" +
		"app;_start;main;compute 30\n" +
		"app;std::map<int, int>::find(int const&) const 18446744073709551615\n"
	got, err := ReadFolded(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	k := func(n string) stack.Frame { return stack.Frame{Name: n, Module: "[kernel]", Kernel: true} }
	want := []stack.Stack{
		{Frames: []stack.Frame{{Name: "app"}, {Name: "_start"}, {Name: "main"}, {Name: "compute"}}, Count: 150},
		{Frames: []stack.Frame{{Name: "app"}, {Name: "_start"}, {Name: "main"}, {Name: "[unknown]"}}, Count: 3},
		{Frames: []stack.Frame{{Name: "swapper"}, k("secondary_startup_64"), k("do_idle")}, Count: 40},
		{Frames: []stack.Frame{{Name: "app"}, {Name: "std::map<int, int>::find(int const&) const"}}, Count: 1<<64 - 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// Frame names are shared between stacks, not copied per line.
	if a, b := got[0].Frames[2].Name, got[1].Frames[2].Name; unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("frame names are not interned")
	}
}

func TestReadFoldedErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"main;a 1\nmain;b\n", "folded line 2: not a folded stack: no sample count"},
		{"main;a x\n", "folded line 1: not a folded stack: sample count \"x\""},
		{"main;a 1.5\n", "sample count \"1.5\""},
		{"main;a -1\n", "sample count \"-1\""},
		{"main;a 99999999999999999999\n", "is not a whole number"},
		{"\n\n   7\n", "folded line 3: not a folded stack: no frames"},
	} {
		_, err := ReadFolded(strings.NewReader(tc.in))
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ReadFolded(%q) = %v, want an ErrSyntax saying %q", tc.in, err, tc.msg)
		}
	}
	if got, err := ReadFolded(strings.NewReader("")); err != nil || len(got) != 0 {
		t.Errorf("empty input: %v, %v", got, err)
	}
}

func TestTop(t *testing.T) {
	f := func(name, module string) stack.Frame { return stack.Frame{Name: name, Module: module} }
	main, a, b := f("main", "app"), f("a", "app"), f("b", "app")
	aLib := f("a", "lib.so") // the same name in another module is another function
	stacks := []stack.Stack{
		{Frames: []stack.Frame{main, a, b, a, b, a}, Count: 10}, // recursion: a and b count once
		{Frames: []stack.Frame{main, a}, Count: 5},
		{Frames: []stack.Frame{main, b, aLib}, Count: 3},
		{Frames: []stack.Frame{main}, Count: 2},
		{Frames: []stack.Frame{main, a, b}, Count: 4},
		{Frames: []stack.Frame{main, b}, Count: 0}, // no samples, no row
		{Count: 7}, // no frames, no row
	}
	got := Top(stacks, 0)
	want := []TopRow{
		{Name: "a", Module: "app", Self: 15, Total: 19},
		{Name: "b", Module: "app", Self: 4, Total: 17},
		{Name: "a", Module: "lib.so", Self: 3, Total: 3},
		{Name: "main", Module: "app", Self: 2, Total: 24},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Top:\n%+v\nwant:\n%+v", got, want)
	}
	if got := Top(stacks, 2); !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("Top 2: %+v", got)
	}
	if got := Top(stacks, 10); len(got) != 4 {
		t.Errorf("Top 10 of 4: %d rows", len(got))
	}
	// Every Total is at most the samples, every Self at most its Total,
	// and the Selfs add up to the samples.
	var self uint64
	for _, r := range got {
		if r.Self > r.Total || r.Total > 24 {
			t.Errorf("row %+v out of range", r)
		}
		self += r.Self
	}
	if self != 24 {
		t.Errorf("self samples add up to %d, want 24", self)
	}
}

func TestWriteTop(t *testing.T) {
	rows := Top(small(), 5)
	var b bytes.Buffer
	if err := WriteTop(&b, rows, 100); err != nil {
		t.Fatal(err)
	}
	// Ties in self samples go to the larger total, then by name.
	// Counts right-aligned, two spaces apart (internal/table).
	want := ` SELF%  SELF  TOTAL%  TOTAL  FUNCTION
70.00%    70  80.00%     80  main.inner [app]
10.00%    10  20.00%     20  main.other [app]
10.00%    10  10.00%     10  main.helper [app]
 5.00%     5   5.00%      5  ksys_write [kernel]
 5.00%     5   5.00%      5  libcxx.so+0x1f2c [libcxx.so]
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	testutil.Golden(t, "flame/testdata/small.top", b.Bytes())

	b.Reset()
	WriteTop(&b, []TopRow{{Name: "f", Self: 12345678, Total: 12345678}}, 0)
	if want := "SELF%      SELF  TOTAL%     TOTAL  FUNCTION\n    -  12345678       -  12345678  f\n"; b.String() != want {
		t.Errorf("no samples, wide counts:\n%q\nwant\n%q", b.String(), want)
	}
}
