package testutil_test

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// chainSource has an inline chain known from the source: leaf's call of
// sink is inlined into mid, and mid into outer, so the call instruction's
// chain is leaf <- mid <- outer.
const chainSource = `__attribute__((noinline)) int sink(int x) { __asm__ volatile("" ::: "memory"); return x + 1; }
static inline __attribute__((always_inline)) int leaf(int x) { return sink(x) * 3; }
static inline __attribute__((always_inline)) int mid(int x) { return leaf(x) ^ sink(x + 5); }
__attribute__((noinline)) int outer(int x) { return mid(x) + 7; }
int main(int argc, char **argv) { return outer(argc); }
`

// sourceLine returns the 1-based line of chainSource holding s.
func sourceLine(t *testing.T, s string) int {
	for i, l := range strings.Split(chainSource, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%q not in the source", s)
	return 0
}

func buildChain(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testutil.Skipf(t, "gcc missing")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "chain.c")
	if err := os.WriteFile(src, []byte(chainSource), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "chain")
	if out, err := exec.Command("gcc", "-g", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// TestOraclesInlineChain runs addr2line and llvm-symbolizer over every
// instruction of outer and requires both to find the chain the source
// implies at the calls of sink: leaf at its line, mid at the line calling
// leaf, outer at the line calling mid; and the two to agree everywhere.
func TestOraclesInlineChain(t *testing.T) {
	bin := buildChain(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var outer elf.Symbol
	for _, s := range testutil.FuncSymbols(t, bin) {
		if s.Name == "outer" {
			outer = s
		}
	}
	if outer.Size == 0 {
		t.Fatal("no symbol outer")
	}
	addrs := testutil.InsnStarts(f, outer.Value, outer.Size)
	if len(addrs) < 3 {
		t.Fatalf("outer decodes to %d instructions", len(addrs))
	}
	want := []testutil.OracleFrame{
		{Func: "leaf", File: "chain.c", Line: sourceLine(t, "int leaf(")},
		{Func: "mid", File: "chain.c", Line: sourceLine(t, "int mid(")},
		{Func: "outer", File: "chain.c", Line: sourceLine(t, "int outer(")},
	}
	for _, oracle := range []struct {
		name string
		run  func(testing.TB, string, []uint64) [][]testutil.OracleFrame
	}{
		{"addr2line", testutil.Addr2Line},
		{"llvm-symbolizer", testutil.LLVMSymbolizer},
	} {
		t.Run(oracle.name, func(t *testing.T) {
			res := oracle.run(t, bin, addrs)
			found := false
			for i, chain := range res {
				if len(chain) == 0 || chain[len(chain)-1].Func != "outer" {
					t.Errorf("0x%x: outermost frame is not outer: %s", addrs[i], testutil.FormatFrames(chain))
				}
				if testutil.CompareFrames(chain, want) == "" {
					found = true
				}
			}
			if !found {
				for i, chain := range res {
					t.Logf("0x%x %s", addrs[i], testutil.FormatFrames(chain))
				}
				t.Errorf("no instruction has the chain %s", testutil.FormatFrames(want))
			}
		})
	}
	a2l := testutil.Addr2Line(t, bin, addrs)
	llvm := testutil.LLVMSymbolizer(t, bin, addrs)
	for i := range addrs {
		if d := testutil.CompareFrames(a2l[i], llvm[i]); d != "" {
			t.Errorf("0x%x: addr2line %s, llvm-symbolizer %s: %s", addrs[i],
				testutil.FormatFrames(a2l[i]), testutil.FormatFrames(llvm[i]), d)
		}
	}
}

// TestSampleAddrs: the same seed gives the same sorted, distinct addresses,
// each an instruction start inside a function symbol.
func TestSampleAddrs(t *testing.T) {
	bin := buildChain(t)
	a := testutil.SampleAddrs(t, bin, 8, 7)
	b := testutil.SampleAddrs(t, bin, 8, 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("seed 7 gave %x then %x", a, b)
	}
	if len(a) != 8 {
		t.Fatalf("%d addresses, want 8", len(a))
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	starts := map[uint64]bool{}
	for _, s := range testutil.FuncSymbols(t, bin) {
		for _, x := range testutil.InsnStarts(f, s.Value, s.Size) {
			starts[x] = true
		}
	}
	for i, x := range a {
		if i > 0 && x <= a[i-1] {
			t.Errorf("not sorted and distinct at %d: %x", i, a)
		}
		if !starts[x] {
			t.Errorf("0x%x is not an instruction start of a function", x)
		}
	}
}

func TestParseAddr2Line(t *testing.T) {
	out := `0x0000000000001040
leaf
/tmp/chain.c:2 (discriminator 1)
outer
/tmp/chain.c:4
0x0000000000001050
??
??:0
0x0000000000001060
main
chain.c:?
`
	got, err := testutil.ParseAddr2Line(out, []uint64{0x1040, 0x1050, 0x1060})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]testutil.OracleFrame{
		{{Func: "leaf", File: "/tmp/chain.c", Line: 2}, {Func: "outer", File: "/tmp/chain.c", Line: 4}},
		{{}},
		{{Func: "main", File: "chain.c"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if _, err := testutil.ParseAddr2Line(out, []uint64{0x1040, 0x1050}); err == nil {
		t.Error("an address too many in the output: no error")
	}
}

func TestNormFunc(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"main", "main"},
		{"real::checked_div(long, long)", "real::checked_div"},
		{"long real::total<int, long>(boost::container::flat_map<int, long, std::less<int>, void> const&)", "real::total<int, long>"},
		{"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_data[abi:cxx11]() const", "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_data"},
		{"real::Workload::Workload()::{lambda(long)#1}::operator()(long) const", "real::Workload::Workload()::{lambda(long)}::operator()"},
		{"ns::make_keep(int, double)::'lambda'(int)::operator()(int) const", "ns::make_keep(int, double)::{lambda(int)}::operator()"},
		{"json::type_name() const (.isra.0)", "json::type_name"},
		{"E json::create<std::nullptr_t, 0>(int, std::nullptr_t) (.isra.0.cold)", "json::create<std::nullptr_t, 0>"},
		{"E json::create<decltype(nullptr), 0>(int, decltype(nullptr))", "json::create<std::nullptr_t, 0>"},
		{"property_init.lto_priv.0.cold", "property_init"},
		{"_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$::fmt::hed626ddfdc0e35cc (.llvm.9888706613677422592)", "<&T as core::fmt::Debug>::fmt"},
		{"core::ptr::const_ptr::_$LT$impl$u20$$BP$const$u20$T$GT$::read::he81bf259ba2fb928", "core::ptr::const_ptr::<impl *const T>::read"},
		{"_ZNVSt9__atomic011atomic_flag5clearESt12memory_order@@GLIBCXX_3.4.11", "std::__atomic0::atomic_flag::clear"},
		{"transaction clone for std::runtime_error::~runtime_error()", "std::runtime_error::~runtime_error"},
		{"_ZGTtNSt13runtime_errorD1Ev", "std::runtime_error::~runtime_error"},
		{"bool f<P::{unnamed type#2}::{unnamed type#1}>(int)", "f<P::{unnamed type}::{unnamed type}>"},
		{"bool f<P::'unnamed0'::'unnamed'>(int)", "f<P::{unnamed type}::{unnamed type}>"},
		{"void concat_into<std::string, char, , 0>(std::string&)", "concat_into<std::string, char, 0>"},
		{"bool std::operator<<char, std::char_traits<char> >(int)", "std::operator<<char, std::char_traits<char> >"},
		{"core::ptr::drop_in_place$LT$Box$LT$dyn$u20$Fn$LT$$LP$$RP$$GT$$u2b$Output$u20$$u3d$$u20$u8$GT$$GT$::h982c5ff8f1865aaa", "core::ptr::drop_in_place<Box<dyn Fn<()>+Output = u8>>"},
		{"std::rt::lang_start::_$u7b$$u7b$closure$u7d$$u7d$::had561ca13f73ef6e", "std::rt::lang_start::{{closure}}"},
		{"(anonymous namespace)::helper(int)", "(anonymous namespace)::helper"},
		{"Foo::operator<<(int)", "Foo::operator<<"},
		{"Foo::operator bool() const", "Foo::operator bool"},
		{"Foo::operator unsigned long() const", "Foo::operator unsigned long"},
		{"operator new(unsigned long)", "operator new"},
		{"bool std::operator< <char>(std::string const&, std::string const&)", "std::operator<<char>"},
		{"real::parse_line::h0123456789abcdef", "real::parse_line"},
		{"<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop::h0123456789abcdef", "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop"},
		{"cmd/go/internal/load.(*Package).Resolve", "cmd/go/internal/load.(*Package).Resolve"},
		{"array_list.ArrayListAligned(real.Sample,null).append", "array_list.ArrayListAligned(real.Sample,null).append"},
	} {
		if got := testutil.NormFunc(c.in); got != c.want {
			t.Errorf("NormFunc(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
