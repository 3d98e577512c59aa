package gen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// testSeeds are small programs that exercise loops around inline
// expansions, clones, splits and Go methods; seed 1 holds minimal
// reproducers (see WriteFailures' output in the log).
var testSeeds = []int64{1, 2, 3}

// TestGenerate: the same seed gives the same program, every language's
// source names every function, and a program's calls stay within the ring.
func TestGenerate(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 42, 1000} {
		a, b := Generate(seed), Generate(seed)
		for _, l := range []Lang{C, Go, Rust, Zig} {
			sa, sb := a.Source(l), b.Source(l)
			if sa != sb {
				t.Fatalf("seed %d %s: two sources", seed, l)
			}
			for _, f := range a.Funcs {
				if !strings.Contains(sa, f.Name+"(") {
					t.Errorf("seed %d %s: no %s", seed, l, f.Name)
				}
			}
		}
		if a.MaxN() < 20 {
			t.Errorf("seed %d: MaxN %d", seed, a.MaxN())
		}
		if len(a.Roots) == 0 {
			t.Errorf("seed %d: no root", seed)
		}
	}
}

// TestRecordValues: every program a test probes records what its calls
// passed, in each language; a parameter recorded by its callers (unused)
// is there too.
func TestRecordValues(t *testing.T) {
	for _, b := range []string{"gcc-O2", "go"} {
		build, _ := BuildNamed(b)
		if _, err := exec.LookPath(build.Tool()); err != nil {
			testutil.Skipf(t, "%s not found", build.Tool())
		}
		p := Generate(1)
		bin, err := build.Make(p, filepath.Join(t.TempDir(), b))
		if err != nil {
			t.Fatal(err)
		}
		r, err := runRecord(bin, filepath.Dir(bin), "t", []string{"3"})
		if err != nil {
			t.Fatal(err)
		}
		for _, ri := range p.Roots {
			f := p.Funcs[ri]
			if r.Calls[f.Name] != 3 {
				t.Errorf("%s: root %s: %d calls, want 3", b, f.Name, r.Calls[f.Name])
			}
			// main passes i*(j+3)+j to parameter j: 0..2 for i = 0.
			for j, pa := range f.Params {
				if got := r.Values[f.Name][pa.Name]; len(got) != 3 || got[0] != int64(j) {
					t.Errorf("%s: %s %s = %v", b, f.Name, pa.Name, got)
				}
			}
		}
	}
}

// regressions are programs, by build and seed, each of which once showed
// a class of placement error; TestExact probes them too.
var regressions = []struct {
	build string
	seed  int64
	class string
	read  []string // "fn02 a": arguments every site reads, never ?; "fn02 a|why": never ? for a reason holding why
	guard bool     // the program Guarded makes of the seed
}{
	{"gcc-O3", 14, "GCC copies a body's head into the previous call's cold path, which jumps past the entry", nil, false},
	{"clang-O2", 1, "LLVM leaves the load out of values it computes from a spilled variable (fn02's a is c ^ 39, c at [RSP]): read with the load put back", []string{"fn02 a", "fn02 b", "fn05 b"}, false},
	{"clang-O2", 3, "a loop unrolled around a call: copies of the body apart, in one DIE", nil, false},
	{"clang-O2", 4, "unrolled copies end to end holding nested expansions", nil, false},
	{"clang-O2", 5, "unrolled copies end to end with no line of their own", nil, false},
	{"rust-O3", 1, "unrolled copies whose only stores are in a nested expansion", nil, false},
	{"rust-O3", 10, "a conditional call that one unrolled copy makes (its constant folded), no anchor of the others", nil, false},
	{"rust-O3", 12, "LLVM's debug info leaves out an operation the code makes (a ^ 235 of an odd a is (a & -2) ^ 234; it says a ^ 234)", nil, false},
	{"gcc-O3", 38, "a store in an unrolled loop of the body, made several times per call", nil, false},
	{"zig-fast", 1, "vzeroupper (AVX code), a body's load hoisted out of main's loop, calls in an unrolled loop of the body", nil, false},
	{"zig-fast", 2, "an expansion in a rotated loop entered at two starts, its parameters' locations beginning where they join: counted and read there", []string{"fn01 a", "fn01 c"}, false},
	{"zig-fast", 4, "sibling expansions interleaved: starts reached only through another are the same call", nil, false},
	{"zig-fast", 5, "a first piece without effects, joined to the call through code of no line", nil, false},
	{"zig-fast", 9, "three calls of an unrolled loop merged into one stretch of code", nil, false},
	{"zig-fast", 12, "a register reload of the body on the path that skips the call", nil, false},
	{"go", 2, "an inline mark the compiler took from a loop before the call", nil, false},
	{"go", 10, "an instruction Go shared between two inlined calls", nil, false},
	{"go", 11, "an argument's reload hoisted above a conditional call", nil, false},
	{"go", 12, "an inline mark on one branch only", nil, false},
	{"gcc-O3", 139, "GCC's .part of a guarded function inlined back into each expansion of its head (an expansion of fn11 in one of fn11, at its declaration line): counted twice", nil, true},
	{"gcc-O2", 122, "a guarded function's .part inlined back into an expansion of its head", nil, true},
	{"gcc-O3", 119, "a nested expansion's store in a loop of the body GCC unrolled (three per call) taken for the calls' anchor: counted three times", nil, false},
	{"clang-O2", 1003, "copies of an unrolled loop's expansion that record through a call and store nothing: counted at the call", nil, true},
	{"rust-O3", 1007, "LLVM's code merged from two calls, an expansion called from line 0: no call", nil, true},
	{"gcc-O2", 1041, "a jump back to an expansion's entry given the declaration's row (a guarded body joined from the caller's loop): counted twice", nil, true},
	{"rust-O3", 1016, "a guarded body in an unrolled loop: its early return's three copies end to end, its rest in a loop of its own (starts in different loops of the caller): one call counted per three", nil, true},
	{"rust-O3", 1019, "the same, the guarded function inlined into main through another expansion", nil, true},
	{"gcc-O3", 1135, "GCC without a frame pointer holds a value as RBP-1 (RBP a register like any other): read, not refused as a stack address", []string{"fn10 c"}, true},
	{"gcc-O2", 1004, "a parameter GCC removed from a clone, whose caller passes on its own entry value, an int it only sign-extended (movslq %edx,%rdx): read", []string{"fn02 b"}, true},
	{"rust-O3", 1203, "rustc's MIR inliner makes an inlined call's argument a local of the parameter's name and line, with its value and no parameter DIE: read", []string{"fn12 b"}, true},
	{"clang-O2", 1050, "a value LLVM computes from two values given one stack slot ([RSP+40]-[RSP+40]): one constant for every call, ? with why", nil, true},
	{"clang-O2", 1078, "an unrolled loop's copies of a guarded body whose only store every call makes has no line (LLVM merged the records); the third copy has the caller's reloads in it: counted at those stores", nil, true},
	{"clang-O2", 1357, "a DIE holding four calls, two unrolled copies in each of two unrolled copies of a caller's loop, the second reachable from the first: counted at the stores of each loop's own copies", nil, true},
	{"clang-O2", 1080, "a guarded body unrolled and unswitched: the record hoisted above the guard and the copies' records of no line, on both paths: counted at those stores", nil, true},
	{"gcc-O2", 1080, "GCC unswitches the loop around a guarded call on the guard: the early return's copy of the loop passes the entry on its first iteration only; and its debug info gives a as RBX<<1 after fn00's r was moved to RBX (gdb prints the same wrong value): ? with why", nil, true},
	{"gcc-O3", 1080, "the same stale RBX<<1 in four unrolled copies, RBX a copy of R13 before fn00's r was computed into it: ? with why, not a wrong value", nil, true},
	{"gcc-O3", 1374, "a loop of calls nested in a body whose latch GCC gives to no scope: no loop of calls of the body, its head no start (counted twice)", nil, true},
	{"gcc-O3", 1399, "the same in a guarded body", nil, true},
	{"gcc-O3", 1420, "two calls of a guarded function with one argument: where the first returned early, GCC jumps from its return to the second's record, the second's entry_pc on the other path (its .part's call): that entry counts too (missed)", nil, true},
	{"gcc-O2", 1302, "a call site's value of a removed parameter GCC gives as R13^225 after fn04's r was moved to R13, which held a copy of RBP before (gdb prints the same wrong value): that caller's value is not read", nil, true},
	{"gcc-O3", 1302, "the same argument given as RBX^225 where the code computes xor $0xe1,%r12b, the caller's a in R12 and its r in RBX: that caller's value is not read", nil, true},
	{"rust-O3", 1306, "LLVM's debug info leaves out an operation the code makes on a value loaded from the stack ([RSP]^78 where the code computes ([RSP]&-2)^78): ? with why", nil, true},
	{"rust-O3", 1413, "LLVM unrolls a loop of two calls and gives part of the second call's arithmetic a DIE of its own, entered from and going back to that call's code, with no effect: no call (counted twice)", nil, true},
	{"rust-O3", 1326, "LLVM's debug info leaves out an operation folded into a constant (a = b ^ 108 with b = c ^ 166 is c ^ 202 in the code, R15 ^ 108 in the debug info): ? with why", nil, true},
	{"gcc-O2", 1454, "a guard known false after another guarded call's on the same operand: one path jumps into the body past its head from a row of the declaration's line, the other falls into it (counted at the join)", nil, true},
	{"gcc-O3", 1456, "GCC gives main's i*9+1 as [CFA-184]*9+1 where an 8-byte store gave the slot fn02's r+1 after the 4-byte one of i (gdb prints the same wrong value): ? with why", nil, true},
	{"gcc-O3", 1446, "GCC gives fn11's c as R9^130, the code xors a copy of R9 it tested first (test $0x1,%al): a test changes nothing, the value is read", []string{"fn11 c"}, true},
	{"rust-O3", 1452, "LLVM gives main's c = i*5+2 as (RAX&0xffffffff)*5+2 right after mov (%rsp),%rax loaded i over a copy of RSP, and the code computes it so from the loaded i (gdb prints it): read, not refused as stale", []string{"fn00 c"}, true},
	{"gcc-O2", 2204, "a removed parameter of fn12's clone that one caller, fn09, passes as its own entry value of RDI, which it changes before the call: ? with that reason, not a fault (gdb reads it two frames up)", nil, true},
	{"rust-O3", 2214, "fn08 (a record, then a loop of three fn10 calls) inlined once into fn04, LLVM hoisting the record's unconditional store out of it and unrolling the loop: fn10's three records per call taken for three calls (counted three times)", nil, true},
	{"gcc-O3", 2227, "GCC gives fn08's a as [CFA-160], main's i*3 by a 4-byte store, where on the path through fn03's tail an 8-byte store puts fn03's b in that slot (gdb prints b too): ? with why, not a wrong value", nil, true},
	{"gcc-O2", 2260, "GCC splits fn04's loop of two guarded fn05 calls by the guard into two loops and tests it at the bottom of the heavy side's: one call may pass two of the three starts (a mark), and the next call's start followed the previous call's .part call within an iteration (its mark kept 39 of 58 calls from counting): cleared where control returns to fn04 after the body's effect", nil, true},
	{"gcc-O3", 2260, "the same at -O3", nil, true},
	{"gcc-O2", 2284, "fn03's expansion in main holds one call whose body's nested stores repeat (three): taken for three calls' anchors (counted three times)", nil, true},
	{"rust-O3", 1808, "LLVM unrolls a loop of three calls and gives the third call's 1+a+b, sunk into main's loop latch, a DIE of its own with no line and no effect: no call (counted twice)", nil, true},
	{"gcc-O2", 2321, "GCC gives fn00's c as [CFA-80] from the expansion's entry on, where its scheduler moved the argument's spill (mov %ecx,0x20(%rsp)) below it: the slot holds the previous iteration's c (gdb prints it too): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 2321, "the same at -O3", nil, true},
	{"clang-O2", 2379, "LLVM gives fn12's long a, passed fn06's unsigned b, as the 8 bytes at [RSP+4], which a 4-byte store filled (the high half a neighbour's; gdb prints 0x10_00000013 for 19): ? with why, not a wrong value", nil, true},
	{"rust-O3", 2314, "one DIE of fn06 for a loop's two unrolled copies, the second counted at a store deep in its code: the first call's arguments were read past the second copy's start (c 1 where the call passed 0): read before a location list's constant changes", nil, true},
	{"gcc-O3", 2325, "fn00's loop of two fn01 calls, its latch given to main's line (outside the expansion): its head taken for a way into the expansion from the caller (counted 34 for 20)", nil, true},
	{"gcc-O3", 2349, "the same, fn04 in main", nil, true},
	{"gcc-O3", 3118, "the same, fn01's loop of calls the body's tail, leaving to main's code", nil, true},
	{"gcc-O3", 2700, "a removed parameter of fn05's clone that main's call site gives as [CFA-144]*9+1, a 4-byte read of a slot an 8-byte store overwrote after the 4-byte store of i (gdb prints 10 for 1 too): ? with why, not a wrong value", nil, true},
	{"gcc-O2", 3100, "GCC gives fn07's a as the 4 bytes at [CFA-120], which main's 4-byte b filled before two 8-byte stores of other values (gdb prints 718 for 1 too): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 3223, "a loop of three fn08 calls unswitched on fn08's guard, its odd copy entered at fn09's scope given to code hoisted before the loop: that entry taken for the copy's calls, the loop's own fn09 record no start (counted once per three)", nil, true},
	{"gcc-O3", 3257, "GCC gives fn02's b as [CFA-136] from the expansion's entry, the spill below it, where an 8-byte store later in main's loop reaches the site (gdb prints 876 for 1 too): ? with why, not a wrong value", nil, true},
	{"gcc-O2", 2786, "a spill GCC hoisted out of main's loop and gave fn08's scope, from which the path goes on to the loop's conditional fn08: a start only through the other (counted once too often)", nil, true},
	{"gcc-O3", 2389, "fn09's loop of two fn11 calls unrolled in one DIE, each copy's row of fn11's declaration line at the caller's instruction before it, where the DIE has an empty range: every copy a start (15 of 30 missed)", nil, true},
	{"go", 2273, "Go gives an instruction two calls share (the movslq of a, at 0x4a21e8) to the later call's DIE (line 169), whose body comes back after the earlier call's record: counted there, in call order, not ahead of the earlier call (each value read crosswise)", nil, true},
	{"go", 2369, "fn11's first arithmetic in fn00 scheduled ahead of fn00's own record and its call of fn02 (whose fn04 calls fn11 nine times): counted where the body comes back after them, not ahead", nil, true},
	{"go1.16", 8535, "Go 1.16's stack check loads the goroutine from thread-local storage (mov %fs:-8,%rcx) before its cmp and jbe: the entry probe sat on that first instruction and counted a call twice when a preemption request sent it through morestack (stat 216 for 215): now on the jbe, guarded by its flags", nil, true},
	{"go1.16", 8556, "the same in trace (616 events for 615 calls of fn10)", nil, true},
	{"go", 2312, "cmd/compile gives (*S).fn10's stack slot of b+c (fn12's c) to a later value, r, its location list keeping c there (gdb prints r too): ? with why; and fn12's first arithmetic of the call at line 197 ahead of line 196's call: counted after it", nil, true},
	{"rust-O3", 1666, "LLVM's debug info gives a call's a^147 as [RSP]^146 where the code computes (EDI&-2)^146 from a copy of a: the operation left out is found though the copy's source is not: ? with why", nil, true},
	{"clang-O2", 2263, "LLVM unrolls fn05's loop of two fn09(172) calls and gives a as 172 for the DIE of both copies: read, each copy storing 172 where the call's own record is", []string{"fn09 a"}, true},
	{"rust-O3", 2264, "the same for fn03(134, ...) in main's unrolled loop of three", []string{"fn03 a"}, true},
	{"rust-O3", 2219, "fn08(i, 100) in an unrolled loop, one DIE for the three copies: b (100 in every copy's store) read though the copies store different a (0, 1, 2)", []string{"fn08 b"}, true},
	{"clang-O2", 2225, "copies that record through a call: fn10(113, ...) read, each copy passing 113 to the call", []string{"fn10 a"}, true},
	{"rust-O3", 2256, "LLVM gives fn06's a = b ^ 61 as RDI^61 where the code computes (RDI & -4) ^ 61, RDI = 3x+1 with x = (4y+1) & -3: a multiple of 4, the AND changes nothing (gdb prints it): read", []string{"fn06 a"}, true},
	{"rust-O3", 2285, "LLVM gives fn07's c as RBX^82 where the code computes (RBX & -2) ^ 82 of an RBX that may be odd (gdb prints a value no call passed): ? with why", nil, true},
	{"clang-O2", 2290, "LLVM gives fn13's b = a ^ 224 as RDX^224 where the code computes (EDX & -2) ^ 224, RDX = a + a: even, the AND changes nothing (gdb prints it): read", []string{"fn13 b|first ("}, true},
	{"gcc-O2", 2290, "GCC gives fn13's b as RCX^224 and RCX*3+1 after lea (%rsi,%rsi,1),%rcx put fn12's a in RCX, and the code computes both from it past the record's branch (gdb prints them): read, not refused as stale", []string{"fn13 b|writes it there"}, true},
	{"rust-O3", 3337, "LLVM gives fn01's a = b ^ 155 as RDI^154 where the code computes (EDI & -2) ^ 154 once for three unrolled copies; the third copy's site is 40 instructions past it (printed 153 where the call passed 152): ? with why", nil, true},
	{"rust-O3", 2289, "fn06(i) in an unrolled loop of three, the DIE giving a as 0 for the three calls (gdb prints 0 for each), the copies storing 0, 1, 2: ? with why, not a wrong value", nil, true},
	{"clang-O2", 3440, "LLVM gives fn09's b = a + b in fn08 as RBX+R13 after add %r13,%rbx made a + b in RBX, and as RBX alone further on (gdb prints a + 2b): ? with why, not a wrong value", nil, true},
	{"clang-O2", 3586, "fn10's DIE holds four unrolled calls; the second copy's a has no location at its start, and past fn08's record the third copy's code sets RBX to its own a before its start (a store): not read there (printed 5 where the call passed 4)", nil, true},
	{"gcc-O2", 3107, "GCC gives fn12's b as [CFA-136] over [0x182b,0x1833) only, before mov %rsi,0x8(%rsp) at 0x182e fills the slot (gdb prints 0 for 446 too): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 3521, "GCC gives fn07's c as ([CFA-96]^34)+R12 (and fn09's a from it) in the fourth copy of fn03's loop, after mov %r11,%r12 moved fn03's r into R12, where the other copies read R12 as fn03's a (gdb prints the same wrong value): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 5010, "GCC gives fn02's b as (R13 sign-extended)+u32[CFA-88] after mov %r15d,%r13d moved fn01's a into R13, and the code computes it so (movslq %r15d,%r9; lea (%r9,%r14,1),%rcx): read, not refused as stale", []string{"fn02 b"}, true},
	{"gcc-O2", 9003, "GCC gives fn09's c = b + a in fn03 as u32[CFA-168]+R12, where it gives fn03's b the slot and a R12 (moved there by mov %r14d,%r12d at main's start): read, not refused as stale", []string{"fn09 c|writes it there"}, true},
	{"gcc-O3", 3500, "fn12's call on the odd path of fn01's loop enters its DIE at 0x2023 (its arguments' setup) and has the declaration's row at 0x202c, past a caller's instruction: one call, not two copies (counted 136 for 116)", nil, true},
	{"rust-O3", 3099, "fn09's three su calls merged into one store under an su called from line 0, in each of fn06's two unrolled fn09 copies: taken for the earliest statement, it anchored one call per expansion (155 of 215)", nil, true},
	{"rust-O3", 3406, "fn11(21) inlined into fn09, its fn12(21) under the folded guard an expansion called from line 0 with its whole record: a call of its own, not code merged from the others (165 of 185)", nil, true},
	{"rust-O3", 2734, "LLVM gives fn11's a = (3x+1) ^ 85 of an odd 3x+1 as ((RCX*3) | 1) ^ 84 where the code computes (RCX*3) ^ 84 (gdb prints it, 83 where the call passed 82): ? with why", nil, true},
	{"rust-O3", 3530, "LLVM gives fn08's b = (3x+1) ^ 191 as (R13 | 1) ^ 190 where the code computes (R13 & -2) ^ 190 (161 where the call passed 160): ? with why", nil, true},
	{"rust-O3", 4081, "LLVM gives fn11's b = a ^ 113 of fn10's odd constant a as 1 ^ 112 (47 ^ 112 in main), the code storing (a ^ 112) & -2, the call's 112 (gdb prints 113): ? with why, not a wrong value", nil, true},
	{"rust-O3", 7092, "LLVM computes (i*5+2)&1 as (i*5)&1 in RCX and gives fn01's c = i*5+2, fn08's a = c^178, b and c as RCX (gdb prints 0 where the call passed 2), the code's RDX = 5i+2: ? with why; fn11's a = (RCX+2)^118 read", []string{"fn11 a|trims"}, true},
	{"rust-O3", 4638, "LLVM gives fn07's a, in main's loop, as DW_OP_lit2 for the whole expansion, where the code at the site computes the call's 6i from RBX, which the loop changes (gdb prints 2 too): ? with why, not a wrong value", nil, true},
	{"rust-O3", 4894, "fn02's rolled loop `for i in 0..3 { fn05(i as i32) }`: LLVM gives a as a location list's constant 0 over the loop's code, where the code records RAX = i (0 where the call passed 1, 2): ? with why, not a wrong value", nil, true},
	{"rust-O3", 4504, "fn08(80, 127, a ^ 221) in an unrolled loop of two: LLVM gives b, which fn08 never uses, as 127 for both copies, whose code stores none; main stores 127 to GEN_U before each copy (su): read", []string{"fn08 b|no store of every copy"}, true},
	{"rust-O3", 4833, "fn05(c, 34, a) in fn03's loop in main: rustc's MIR inliner made a a local of fn05's line (no parameter DIE); b = 34 beside the loop's values of a and c: read", []string{"fn05 b|loop of the caller"}, true},
	{"clang-O2", 11600, "fn07(44) in main's loop: LLVM gives a as 44 for the whole expansion, which no register the loop changes feeds (the loop's RBX stays the caller's): read", []string{"fn07 a|loop of the caller"}, true},
	{"rust-O3", 3586, "fn10's second unrolled copy, counted at its record's store, read past fn08's next record outside fn10's ranges in the third copy's code (a 5 where the call passed 4): not read past code of a line outside the expansion", nil, true},
	{"clang-O2", 3568, "fn08's loop of three fn10(184, i) unrolled, one DIE giving a as 184 for the three: the first copy stores it in the record by an 8-byte store, the others by a 16-byte store of (184, i): read", []string{"fn10 a"}, true},
	{"clang-O2", 3599, "main's loop of three fn10(b ^ 101, 111, 195) unrolled, one DIE giving the constants for the three: the copies store them from XMM2, loaded above the loop and again after the calls in it: read", []string{"fn10 b", "fn10 a|whole expansion"}, true},
	{"gcc-O2", 7001, "fn07.constprop.0's removed b, which fn01's call site gives as fn01's entry value of RSI, which fn01 changes before the call: read from main's call site of fn01, two frames up (gdb reads it so)", []string{"fn07 b"}, true},
	{"rust-O3", 3594, "LLVM gives fn11's b = a ^ 191 of fn08's u32 a as (RAX&0xffffffff)^191 after lea (%r12,%r12,1),%eax wrote RAX, and the code computes it from that EAX (mov %eax,%r10d; xor $0xbf,%r10d; gdb prints it): read, not refused as stale", []string{"fn11 b|holds"}, true},
	{"gcc-O2", 3438, "GCC gives fn11's b as (RBP<<32)>>a32, RBP a copy of R12 and later mov %r12d,%ebp, the same low half (gdb prints it): read, not refused as stale", []string{"fn11 b"}, true},
	{"clang-O2", 3538, "LLVM gives fn12's a as R14+1 right after lea (%r14,%r14,2),%r14, a loop's add $0x1,%rax before it (gdb prints it): read, not refused as the wrong register", []string{"fn12 a"}, true},
	{"rust-O3", 3607, "LLVM gives fn07's u32 a as [RSP+156]^0xd6, an 8-byte read of a slot whose stores write 4 bytes: the u32 is the low 4 bytes' (gdb prints it): read, not refused as a narrow slot", []string{"fn07 a|first 4", "fn11 b|first 4"}, true},
	{"rust-O3", 7044, "fn09(a ^ 29, i, 132) in an unrolled loop: rustc's MIR inliner made c a local of fn09's line with no parameter DIE, even in fn09's abstract entry (gdb prints it): read with $params", []string{"fn09 c|left out of the event"}, true},
	{"gcc-O3", 3950, "GCC gives fn10's b (fn09's b ^ 41) as [RSP+80]^41, after mov %r15d,0x50(%rsp) gave the slot R15, which it gives fn10's a, over b's spill, and fn10's code never reads the slot (gdb prints 46 for 44 too): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 3969, "GCC gives fn03's and fn04's b (main's i*4+1) as [RSP+48], which mov %r14d,0x30(%rsp) fills from R14, their a (i*3), and fn11's b in fn07 as [RSP+48]<<1 where the code doubles R13 (mov %r13d,%eax; add %eax,%eax); no code of theirs reads the slot (gdb prints 0 for 1 too): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 10206, "fn08's fn11(a, 72, a): GCC gives fn11's a as [RSP+8], which mov %r13d,0x8(%rsp) fills from R13, which it gives c, and fn11's code reads the slot (testb $0x1,0x8(%rsp)): read, one value passed twice", []string{"fn11 a|another parameter"}, true},
	{"gcc-O2", 3951, "fn09's `if (a & 1) r += fn10(a+a);` then `r += fn10(a^97);`: GCC hoists the two records' counter increment above the test and gives it to the first call's DIE, whose entry_pc 0x17c0 is an empty range: counted there, not at the hoisted code every fn09 call runs (45 for 40)", nil, true},
	{"gcc-O3", 4025, "fn10's loop of two guarded fn11 calls unswitched on the guard: the heavy copy's declaration row at the guard's test, whose early return jumps to the light loop's row: the first light call passed both (11 for 8); counted past the test", nil, true},
	{"gcc-O3", 4032, "fn09's third fn10 call has an empty range and its declaration row at 0x1614, the first call's last instruction on that path: the row is the third call's, not a copy of the first (56 for 55)", nil, true},
	{"gcc-O3", 4546, "fn03's 3-trip loop of fn07(c*3+1) unswitched on fn07's guard: the guard-true path is three straight copies of the early return's record in the one DIE, the first an entry apart from the entry_pc's, each after a row of fn07's declaration line: every copy a start (80 for 120)", nil, true},
	{"gcc-O3", 4562, "the same, fn06's loop of fn07 calls inlined into main (34 for 48)", nil, true},
	{"rust-O3", 4975, "fn01's loop of three fn03 calls unrolled, fn07 inlined into each, its guard true in all three: where fn03's record calls cold() a second chain of the first two early returns jumps back into the third, whose code both chains' starts reach: counted at its record's store (45 for 60)", nil, true},
	{"gcc-O2", 4503, "fn05's guard test at 0x13d7 jumps to the early return's start 0x11af, and a jump-threaded path's jmp at 0x14d4 goes to the heavy path at 0x13e1, each marked with a row of fn05's declaration line: the calls that took the test's jump passed two starts (23 for 20); counted past the test and the jump, at 0x13e1", nil, true},
	{"gcc-O2", 4758, "GCC gives the instruction after fn00's fn05 entry_pc and declaration row (0x1883) to fn04's fn05 DIE (0x188a): the row, which leads into that DIE, is fn00's call's, not a copy of fn04's (50 for 45)", nil, true},
	{"gcc-O3", 11259, "the same in fn09.constprop.1: line 90's fn11 call enters at 0x1977 (entry_pc and declaration row), its next instruction given to line 92's call's DIE: the row is line 90's call's (255 for 180)", nil, true},
	{"gcc-O3", 3433, "fn11's b, which GCC gives as XMM1 in an unrolled loop's copies (pt_regs has no XMM registers), copied there from R14, which still holds it: read from R14", []string{"fn11 b|cannot read ("}, true},
	{"rust-O3", 3947, "LLVM gives fn07's i32 a = x ^ 17 as [RSP+200]^17 where the code computes ((x * 0x300000000) >> 32) ^ 17, an i32 sign extension of the product (gdb prints it): read, not refused as an operation left out", []string{"fn07 a|SAR"}, true},
	{"gcc-O2", 10637, "fn04's fn11(b ^ 3, b ^ 201): GCC gives fn11's b as RDI^202, RDI fn11's a after mov %edi,%eax; xor $0x3,%edi; xor $0xc9,%al (b ^ 201 from the copy): 3^202 is 0xc9 (gdb prints it): read, not refused as an operation folded into the constant", []string{"fn11 b|folded into"}, true},
	{"gcc-O2", 4642, "fn10's fn12(b+a, a^97): GCC gives fn12.constprop.0's removed b at that call as 105, the constant of the call before it, where the call's code stores RBP into gen_u[12][1], which the clone reads (gdb prints 105 too): that call's value ? with why, not a wrong value", nil, true},
	{"gcc-O2", 4430, "fn06's fn11(a, 99, 0): GCC gives fn11.constprop.0's removed c as RBP^205, the argument of the inlined fn09 call before it, where the call's code stores 0 into gen_u[11][2], which the clone reads (gdb prints 202 too): ? with why", nil, true},
	{"gcc-O3", 4833, "fn07's fn09(a, 38): GCC gives fn09.constprop.0's removed b as R12 where the call's code stores 38 into gen_u[9][1], which the clone reads (gdb prints 1 too): ? with why", nil, true},
	{"gcc-O3", 4705, "fn03's fn10(21, a, a^46) inlined in main: GCC gives fn10.constprop.0's removed b as R13<<1, fn01's a+a of the calls before it, where the call's code stores RBP into gen_u[10][1], which the clone reads; RBP and R13 both copy R15D (gdb prints 6 for 3 too): ? with why", nil, true},
	{"gcc-O2", 3546, "fn07.constprop.0's removed b at main's second call (0x1f0b): GCC gives (R12^114) sign-extended, the call before it's, where the code stores RBX^80 (xor $0x50,%rbx) and R12 and RBX hold one value (gdb prints 115 for 81 too): ? with why", nil, true},
	{"gcc-O3", 4016, "GCC gives fn07's c as XMM0 and a as XMM0^56 in fn06's unrolled copies, XMM0 = movq %rax after cltq of EAX, which mov %eax,%ebx copied to RBX first; RAX changes, RBX still holds the low 4 bytes (gdb prints them): read from RBX, fn13's long a = (XMM0^49)&0xffffffff too", []string{"fn07 a|vector register", "fn07 c|vector register", "fn13 a|vector register"}, true},
	{"gcc-O3", 4650, "GCC gives fn04's a as R15^197 from 0x1308 on, after mov %rbx,%r15 moved fn00's r into R15, where the code computed a^197 in R8 from a copy of R15 made before (gdb prints the same wrong value): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 4808, "GCC gives fn04's b as RBX^88 after mov 0x40(%rsp),%rbx moved main's r into RBX, where the code computed b^88 from a copy of RBX before (mov %ebx,%eax; xor $0x58,%eax): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 11217, "GCC gives fn07's a as RBX^244 and fn11's a, b from it, main's r in RBX, where the code computes mov %r14d,%edi; xor $0xf4,%dil from main's a in R14 (gdb prints the same wrong values): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 11520, "GCC gives fn12's c (fn04's a) as RBX in fn04's loop of three calls, where lea (%rax,%r13,1),%rbx put fn04's r there after mov %ebx,%r11d, and fn12's record stores R11 (gdb prints r too): ? with why, not a wrong value", nil, true},
	{"gcc-O2", 4594, "GCC gives fn08's a and b as [CFA-112]*5+7 and [CFA-112]*9+3, one slot, which holds fn06's c, where the code computes them from fn06's a and main's i (gdb prints the same wrong values): ? with why, not a wrong value", nil, true},
	{"gcc-O3", 4594, "the same at -O3 (lea 0x7(%r12,%r12,4),%esi; lea 0x3(%r14,%r14,8),%ecx)", nil, true},
	{"gcc-O3", 4913, "GCC gives fn13's b (fn03's a+c) as ([CFA-160]<<3)+2, where the code computes lea 0x2(,%r15,8),%edx from main's i, and never reads the slot: ? with why, not a wrong value", nil, true},
	{"gcc-O3", 4637, "GCC gives fn12's a (fn11's b^103, b = a+a) as ([CFA-136]<<1)^103, the slot filled from R13, which it gives fn12's b, and the code computes (R13+R13)^103 (gdb prints it): read, not refused as one value passed twice", []string{"fn12 a|another parameter"}, true},
	{"gcc-O2", 12262, "fn09's fn10(21, a ^ 36, a + b) inlined in main: GCC gives fn10.constprop.0's removed c as R9 + u32[CFA-96], a 4-byte read of a slot an 8-byte store overwrote after the 4-byte store of b, where the call's code stores a + b into gen_u[10][2] (gdb prints 88 for 84 too): ? with why, not a wrong value", nil, true},
	{"rust-O3", 4589, "LLVM gives fn02's c as [CFA-136]^193, the slot filled from RDX = 3*RSI, where the code xors a copy of RBX = RSI*3 sign-extended, the same value (gdb prints it): read", []string{"fn02 c|operation from"}, true},
}

// TestExact probes every function of a few generated programs (gcc -O2 and
// Go, and the regressions: every build) with goprobe stat and trace, and
// compares with each program's record. A printed argument value that no
// call passed fails the test: a wrong value is worse than a missing one.
// So does an event before the one of a call made earlier: a probe fires
// when its call runs, in the order of the calls.
// Every ? must come with the spec's reason. Every count must be exact,
// stat's and trace's: a probe fires once per
// call, inlined (in unrolled loops too), cloned or not. GCC describes many
// arguments of these programs as DWARF expressions (a caller's b*3+1
// passed to an expansion, an entry value, a removed clone parameter): at
// least 40 values are read through one in the CI seeds, and each is the
// program's. The log holds the tables and any inexact function.
func TestExact(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "probing needs root")
	}
	goprobe := filepath.Join(t.TempDir(), "goprobe")
	cmd := exec.Command("go", "build", "-o", goprobe, "./cmd/goprobe")
	cmd.Dir = testutil.Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build goprobe: %v\n%s", err, out)
	}
	type run struct {
		build string
		seed  int64
		class string
		read  []string
		guard bool
	}
	var runs []run
	exprValues := 0
	for _, b := range []string{"gcc-O2", "go"} {
		for _, seed := range testSeeds {
			runs = append(runs, run{b, seed, "CI seed", nil, false})
		}
	}
	for _, r := range regressions {
		runs = append(runs, run(r))
	}
	var all []*Result
	for _, rn := range runs {
		t.Run(fmt.Sprintf("%s-%d", rn.build, rn.seed), func(t *testing.T) {
			build, _ := BuildNamed(rn.build)
			if _, err := exec.LookPath(build.Tool()); err != nil {
				testutil.Skipf(t, "%s not found", build.Tool())
			}
			p := Generate(rn.seed)
			if rn.guard {
				p.Guarded()
			}
			r, err := Run(p, build, filepath.Join(t.TempDir(), rn.build), min(5, p.MaxN()), Tools{Goprobe: goprobe})
			if err != nil {
				t.Fatalf("%s seed %d: %v", rn.build, rn.seed, err)
			}
			all = append(all, r)
			for _, fr := range r.Funcs {
				if rn.build == "gcc-O2" && rn.class == "CI seed" {
					exprValues += fr.ExprValues
				}
				if n := fr.Unread[ReasonFault]; n > 0 {
					t.Errorf("%s: %d× ? that the spec gives no reason for (a read that faulted); sites %s", fr.Symbol, n, fr.Sites)
				}
				if fr.Reordered > 0 {
					t.Errorf("%s: %d of %d events before an earlier call's (a site that fires before the call it follows); sites %s", fr.Symbol, fr.Reordered, fr.Trace, fr.Sites)
				}
				if fr.Wrong > 0 {
					t.Errorf("%s: %d of %d values wrong, e.g. %s; sites %s", fr.Symbol, fr.Wrong, fr.Values, fr.WrongEx, fr.Sites)
				}
				for _, fa := range rn.read {
					if f, a, _ := strings.Cut(fa, " "); f == fr.Func {
						checkRead(t, fr, a)
					}
				}
				if c := fr.Class(); c != "" {
					t.Errorf("%s (%s, %s): %s: want %d, goprobe stat %d, trace %d; sites %s (%s)",
						fr.Symbol, fr.Kind, fr.Shape, c, fr.Want, fr.Goprobe, fr.Trace, fr.Sites, rn.class)
				}
			}
		})
	}
	if exprValues < 40 {
		t.Errorf("gcc-O2: %d values read through DWARF expressions, want at least 40", exprValues)
	}
	var buf bytes.Buffer
	WriteTable(&buf, Summarize(all))
	buf.WriteString("\n")
	WriteReasons(&buf, all)
	buf.WriteString("\n")
	WriteFailures(&buf, all)
	t.Logf("\n%s", buf.String())
}

// checkRead fails unless fr's argument a was printed as a number at least
// once and never as ? (with "a|why": never as ? for a reason holding why):
// a recovery the regression holds (that every printed value is its call's
// is checked for all).
func checkRead(t *testing.T, fr *FuncResult, a string) {
	t.Helper()
	a, why, _ := strings.Cut(a, "|")
	if fr.ReadArgs[a] == 0 {
		t.Errorf("%s %s: no value read (sites %s)", fr.Symbol, a, fr.Sites)
	}
	for k, n := range fr.UnreadAt {
		if _, rest, _ := strings.Cut(k, " "); strings.HasPrefix(rest, a+":") && strings.Contains(rest, why) {
			t.Errorf("%s %s: %d× ? at %s", fr.Symbol, a, n, k)
		}
	}
}
