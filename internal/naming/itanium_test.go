package naming

import (
	"debug/dwarf"
	"debug/elf"
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/ianlancetaylor/demangle"

	"github.com/binscope/binscope/internal/testutil"
)

// mangledNames are the distinct C++ mangled names of a file: its function
// symbols and the linkage names of its DWARF (types' too).
func mangledNames(t *testing.T, path string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range testutil.FuncSymbols(t, path) {
		seen[s.Name] = true
	}
	df, err := elf.Open(testutil.DebugFile(path))
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	d, err := df.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	for r := d.Reader(); ; {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		// DW_AT_linkage_name, and DW_AT_MIPS_linkage_name (0x2007).
		for _, a := range []dwarf.Attr{dwarf.AttrLinkageName, dwarf.Attr(0x2007)} {
			if s, ok := e.Val(a).(string); ok {
				seen[s] = true
			}
		}
	}
	var out []string
	for s := range seen {
		if strings.HasPrefix(s, "_Z") {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// TestFastDemangle: on every C++ name of libstdc++ (with its debug file)
// and of a C++ -O2 program over Boost and nlohmann::json, the fast
// demangler either gives up or prints exactly what the library prints
// (github.com/ianlancetaylor/demangle, which matches c++filt), and it
// does not give up on most of them.
func TestFastDemangle(t *testing.T) {
	for _, bin := range []struct{ name, path string }{
		{"libstdc++", testutil.RealBinary(t, "libstdc++")},
		{"cpp-real", testutil.Fixture(t, "cpp-real").Path},
	} {
		checkFast(t, bin.name, mangledNames(t, bin.path), 1000)
	}
}

// TestFastDemangleCeph: the same on every C++ symbol of ceph-osd's debug
// file (over 40,000: Boost.Spirit, lambdas in constructor templates),
// where ceph-osd-dbg is installed (bench/ceph.sh's input; not installed
// by scripts/install-deps.sh).
func TestFastDemangleCeph(t *testing.T) {
	const osd = "/usr/bin/ceph-osd"
	if _, err := os.Stat(osd); err != nil {
		t.Skipf("ceph-osd not installed (apt-get install ceph-osd ceph-osd-dbg): %v", err)
	}
	debug := testutil.DebugFile(osd)
	if debug == "" {
		t.Skip("ceph-osd-dbg not installed")
	}
	f, err := elf.Open(debug)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var names []string
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "_Z") && !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
		}
	}
	checkFast(t, "ceph-osd", names, 40000)
}

// checkFast checks the fast demangler on names, at least min of them:
// where it answers, the library (github.com/ianlancetaylor/demangle, which
// matches c++filt) prints the same; it answers most of them.
func checkFast(t *testing.T, bin string, names []string, min int) {
	t.Helper()
	if len(names) < min {
		t.Fatalf("%s: %d mangled names, want at least %d", bin, len(names), min)
	}
	fast, differ := 0, 0
	for _, sym := range names {
		got, ok := fastDemangle(sym)
		if !ok {
			continue
		}
		fast++
		want, err := demangle.ToString(sym, demangle.NoParams, demangle.NoClones)
		if err != nil || got != want {
			if differ++; differ <= 20 {
				t.Errorf("%s: %s:\nfast    %q\nlibrary %q (%v)", bin, sym, got, want, err)
			}
		}
	}
	t.Logf("%s: %d mangled names, %d demangled by the fast path, %d differ", bin, len(names), fast, differ)
	if differ > 0 {
		t.Errorf("%s: %d of %d names differ", bin, differ, fast)
	}
	if fast < len(names)*3/4 {
		t.Errorf("%s: the fast path took only %d of %d names", bin, fast, len(names))
	}
}

// TestFastDemangleCases: names that exercise each rule, checked the same
// way, and names the fast path must leave to the library.
func TestFastDemangleCases(t *testing.T) {
	for _, sym := range []string{
		"_ZN5boost9container12vec_iteratorIPNS0_3dtl4pairIilEELb1EEppEv",
		"_ZNSt23_Sp_counted_ptr_inplaceINSt10filesystem28recursive_directory_iterator10_Dir_stackESaIS2_ELN9__gnu_cxx12_Lock_policyE2EED4Ev",
		"_ZSt17__allocate_sharedINSt10filesystem7__cxx1116filesystem_error5_ImplELN9__gnu_cxx12_Lock_policyE2ESaIS3_EJPKcEESt12__shared_ptrIT_XT0_EERKT1_DpOT2_",
		"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE5c_strEv",
		"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7_M_dataB5cxx11Ev",
		"_ZN12_GLOBAL__N_14workEv",
		"_ZNSt6vectorIiSaIiEEC2Ev",
		"_ZNSt6vectorIiSaIiEED0Ev",
		"_ZNSt6vectorIiSaIiEEixEm",
		"_ZN1AltIiEEbRKS_S2_",
		"_ZN1AlsIiEEbRKS_S2_",
		"_ZN1A1fIJEEEvv",
		"_ZN1A1fIiJEEEvv",
		"_ZN1A1fIJicEEEvv",
		"_ZN1A1fILi5ELin5ELj1ELl2ELm3ELx4ELy5ELb0ELb1ELc65ELh1ELs2EEEvv",
		"_ZN1A1fILDn0EEEvv",
		"_ZL5checki",
		"_Z3fooIiEvT_",
		"_ZNSs4swapERSs",
		"_ZNSsC1Ev",
		"_ZNK1A1fEv",
		"_ZNO1A1fEv",
		"_ZN1A1fIPKPKcEEvv",
		"_ZN1A1fIRKiOS0_EEvv",
		"_ZN5boost11hash_detail17hash_combine_implERmm",
		"_ZN1A1fIFllEEEvv",
		"_ZN1A1fIPFllEEEvv",
		"_ZN1A1fIRFvvEEEvv",
		"_ZN1A1fIFviiES1_EEvv",
		"_ZN1A1fIPFPcvEEEvv",
		"_ZN1A1fIFvzEEEvv",
		"_ZN1A1fIFRivEEEvv",
		"_ZN1A1fIFvPFviEEEEvv",
		"_ZN1A1fIA10_KcEEvv",
		"_ZN1A1fIRA10_KcEEvv",
		"_ZN1A1fIOA10_A5_iEEvv",
		"_ZN1A1fIPA10_iS1_S2_EEvv",
		"_ZN4core3fmt5write17h0123456789abcdefE.llvm.123",
		"_ZZN4real8WorkloadC4EvENKUllE_clEl",
		"_ZNKSt9_Any_data9_M_accessIZN4real8WorkloadC4EvEUllE1_EERKT_v",
		"_ZNSt14_Function_base13_Base_managerIZN4real8WorkloadC4EvEUllE0_E9_M_createIRKS3_EEvRSt9_Any_dataOT_St17integral_constantIbLb1EE",
		"_ZZNK1A1fEiE1x",
		"_ZZN1A1fEvENUlvE_clEv",
		"_ZNSt10unique_ptrIN1A1BEZN1A6createIS1_JEEEPT_DpOT0_EUlPS1_E_E5resetEv",
	} {
		want, err := demangle.ToString(sym, demangle.NoParams, demangle.NoClones)
		got, ok := fastDemangle(sym)
		if ok && (err != nil || got != want) {
			t.Errorf("%s:\nfast    %q\nlibrary %q (%v)", sym, got, want, err)
		}
		if d, _ := Demangle(sym); err == nil && d != want {
			t.Errorf("Demangle(%s) = %q, want %q", sym, d, want)
		}
	}
	// The fast path leaves these to the library: a lambda, a local
	// name, const function types, a guard variable, legacy Rust,
	// std::string's long spelling before a constructor, a template
	// parameter in the name.
	for _, sym := range []string{
		"_ZZ4mainENKUlvE_clEv",
		"_ZZ4mainE1x",
		"_ZN1A1fIKFviEEEvv",
		"_ZN1A1fIPKFviEEEvv",
		"_ZGVZ4mainE1x",
		"_ZN4core3fmt5write17h0123456789abcdefE",
		"_ZNSsC1Ev",
		"_ZN1AIiE1fIT_EEvv",
	} {
		if got, ok := fastDemangle(sym); ok {
			t.Errorf("fastDemangle(%s) = %q, want it left to the library", sym, got)
		}
	}
}

// TestFastDemangleMutated: names of the C++ program cut short, with a
// byte changed or inserted (a fixed seed): where the fast path answers,
// the library gives the same name and no error.
func TestFastDemangleMutated(t *testing.T) {
	names := mangledNames(t, testutil.Fixture(t, "cpp-real").Path)
	// Half the mutations are of names with local names, closure types,
	// pack expansions or template parameters, whose substitutions the
	// fast path must count as the library does.
	var local []string
	for _, n := range names {
		if strings.Contains(n, "Z") && (strings.Contains(n, "Ul") || strings.Contains(n, "Dp") || strings.Contains(n, "T_")) {
			local = append(local, n)
		}
	}
	if len(local) < 500 {
		t.Fatalf("%d names with local names, closures, packs or template parameters, want at least 500", len(local))
	}
	rng := rand.New(rand.NewSource(1))
	const alpha = "0123456789_ABCDEFIJKLNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	fast, differ := 0, 0
	for k := 0; k < 100000; k++ {
		pool := names
		if k%2 == 0 {
			pool = local
		}
		s := pool[rng.Intn(len(pool))]
		i := rng.Intn(len(s))
		switch rng.Intn(3) {
		case 0:
			s = s[:i]
		case 1:
			s = s[:i] + alpha[rng.Intn(len(alpha)):][:1] + s[i+1:]
		case 2:
			s = s[:i] + alpha[rng.Intn(len(alpha)):][:1] + s[i:]
		}
		got, ok := fastDemangle(s)
		if !ok {
			continue
		}
		fast++
		if want, err := demangle.ToString(s, demangle.NoParams, demangle.NoClones); err != nil || got != want {
			if differ++; differ <= 20 {
				t.Errorf("%s:\nfast    %q\nlibrary %q (%v)", s, got, want, err)
			}
		}
	}
	t.Logf("100,000 mutated names, %d demangled by the fast path, %d differ", fast, differ)
	if fast < 10000 {
		t.Errorf("the fast path took only %d mutated names", fast)
	}
}

// TestFastDemangleTakes: names the fast path must answer, as the library
// does: expansions of a function template's packs (one parameter per
// element, references collapsed), reference collapsing of a template
// parameter's type, conversion operators, inheriting constructors, names
// local to a constructor or destructor template (no return type).
func TestFastDemangleTakes(t *testing.T) {
	for _, sym := range []string{
		"_ZZN1A6createINS_1BEJRA1_KcEEEPT_DpOT0_ENKUlPS1_E_clES7_",
		"_ZZN1A1fIJRiOlEEEvDpOT_E1x",
		"_ZZN1A1fIJiPcEEEvDpRKT_E1x",
		"_ZZN1A1fIRiEEvOT_E1x",
		"_ZNK1AcvbEv",
		"_ZNK1AcvSt6vectorIiSaIiEEEv",
		"_ZN1BCI21AEi",
		"_ZZN1AC4IiEET_E1x",
		"_ZZN1AD4IiEEvE1x",
	} {
		want, err := demangle.ToString(sym, demangle.NoParams, demangle.NoClones)
		if err != nil {
			t.Fatalf("library: %s: %v", sym, err)
		}
		if got, ok := fastDemangle(sym); !ok || got != want {
			t.Errorf("%s: fast %q (answered: %v), library %q", sym, got, ok, want)
		}
	}
}
