// Package gen writes self-recording programs for probe tests: from a seed, a
// random call graph without recursion (a DAG) of about twelve functions, in
// C, Go, Rust or Zig, in the shapes optimisers transform (static, inline,
// noinline, partially inlined, hot/cold split, called with constants so GCC
// clones them, unused parameters, Go methods). Each function records its own
// calls and the values of its parameters; the program writes that record at
// exit, and the harness (harness.go) compares probe counts and printed
// argument values with it.
//
// A program takes two arguments: N, how many times main calls each root of
// the graph, and the file to write the record to (nothing is written
// without it). The record is one line per call, in call order:
//
//	FUNC V0 V1 ...
//
// with each parameter's value as the call passed it, in decimal (a Go
// pointer receiver as its address). A last line "end CALLS" says how many
// calls were made; more than the ring holds (RingSize) is an error.
package gen

import (
	"fmt"
	"math/rand"
	"strings"
)

// RingSize is how many calls a program's record holds.
const RingSize = 1 << 20

// Kind is the shape a function is written in: what its source asks of the
// optimiser. What the optimiser did is read from the binary (Classify).
type Kind int

const (
	KPlain    Kind = iota // external linkage, no attribute (C); an ordinary function elsewhere
	KStatic               // static: inlined where it pays, else out of line
	KInline               // static inline (C), #[inline] (Rust), small (Go)
	KAlways               // always_inline (C), #[inline(always)] (Rust), inline fn (Zig)
	KNoinline             // noinline, //go:noinline, #[inline(never)]
	KSplit                // an unlikely branch with a big cold block (hot/cold split)
	KPartial              // a cheap likely test, then a big body (partial inlining, .part)
	KConst                // every call passes a constant first argument (.constprop)
	KMethod               // Go: a method on *S (elsewhere a plain function)
	numKinds
	// KGuard is static with an early-return guard and a heavy tail (an
	// allocation, loops, a print, the calls): GCC splits it, inlines the
	// head and may inline the tail (.part) back into an expansion of the
	// same function. Only Guarded makes it, so that the seeds' programs
	// of the other kinds stay what they were.
	KGuard = numKinds
)

var kindNames = [...]string{"plain", "static", "inline", "always", "noinline", "split", "partial", "const", "method", "guard"}

func (k Kind) String() string { return kindNames[k] }

// Type is a parameter's type: 32 or 64 bits, signed or not.
type Type int

const (
	TLong Type = iota // long, int, i64
	TInt              // int, int32, i32
	TUint             // unsigned, uint32, u32
)

// Param is one parameter. An unused one is recorded by each caller before
// the call (into a global), so that the callee does not use it.
type Param struct {
	Name   string
	Type   Type
	Unused bool
}

// Expr is an argument expression over the caller's parameters and its loop
// counter.
type Expr struct {
	Op   string // "const", "param", "mul3" (p*3+1), "add" (p+q), "xor" (p^K), "loop" (i)
	P, Q int    // parameter indexes of the caller
	K    int64  // the constant
}

// Call is one call in a function's body: Times times in a loop (1: no
// loop), under a condition on the first parameter when Cond is set.
type Call struct {
	Callee int
	Args   []Expr
	Times  int
	Cond   bool // only when the caller's first parameter is odd
}

// Func is one function of the graph.
type Func struct {
	Name   string
	Kind   Kind
	Params []Param
	Calls  []Call
}

// Program is a generated call graph; Funcs[i] calls only Funcs[j], j > i.
type Program struct {
	Seed  int64
	Funcs []*Func
	Roots []int
}

// Generate makes the call graph of seed: about twelve functions.
func Generate(seed int64) *Program {
	rng := rand.New(rand.NewSource(seed))
	n := 10 + rng.Intn(5)
	p := &Program{Seed: seed}
	for i := 0; i < n; i++ {
		f := &Func{Name: fmt.Sprintf("fn%02d", i), Kind: Kind(rng.Intn(int(numKinds)))}
		np := 1 + rng.Intn(3)
		for j := 0; j < np; j++ {
			f.Params = append(f.Params, Param{Name: string(rune('a' + j)), Type: Type(rng.Intn(3))})
		}
		if np > 1 && rng.Intn(4) == 0 {
			f.Params[1+rng.Intn(np-1)].Unused = true
		}
		p.Funcs = append(p.Funcs, f)
	}
	called := make([]bool, n)
	// Each function calls up to three later ones; keep the calls per root
	// call bounded.
	for i := n - 2; i >= 0; i-- {
		f := p.Funcs[i]
		nc := rng.Intn(4)
		if i < n/2 && nc == 0 {
			nc = 1
		}
		for c := 0; c < nc; c++ {
			callee := i + 1 + rng.Intn(n-i-1)
			call := Call{Callee: callee, Times: 1}
			if rng.Intn(4) == 0 {
				call.Times = 2 + rng.Intn(2)
			}
			call.Cond = rng.Intn(4) == 0
			called[callee] = true
			p.Funcs[callee].kindArgs(f, &call, rng)
			f.Calls = append(f.Calls, call)
		}
	}
	for i := range p.Funcs {
		if !called[i] {
			p.Roots = append(p.Roots, i)
		}
	}
	// Bound the work: drop loops from the heaviest functions until a root
	// call makes at most 300 calls.
	for iter := 0; iter < 100 && p.maxCalls() > 300; iter++ {
		for _, f := range p.Funcs {
			for c := range f.Calls {
				if f.Calls[c].Times > 1 {
					f.Calls[c].Times = 1
					for a, e := range f.Calls[c].Args {
						if e.Op == "loop" {
							f.Calls[c].Args[a] = Expr{Op: "const"} // the loop's only i
						}
					}
					goto next
				}
			}
		}
		for _, f := range p.Funcs {
			if len(f.Calls) > 1 {
				f.Calls = f.Calls[:len(f.Calls)-1]
				break
			}
		}
	next:
	}
	return p
}

// Guarded turns about three in four of p's static functions (KStatic) into KGuard,
// drawing from a second stream of the seed, and returns p. The programs
// of Generate alone stay as they were, seed for seed.
func (p *Program) Guarded() *Program {
	rng := rand.New(rand.NewSource(p.Seed*7919 + 17))
	for _, f := range p.Funcs {
		if f.Kind == KStatic && rng.Intn(4) != 0 {
			f.Kind = KGuard
		}
	}
	return p
}

// hasKind reports whether a function of p is of kind k.
func (p *Program) hasKind(k Kind) bool {
	for _, f := range p.Funcs {
		if f.Kind == k {
			return true
		}
	}
	return false
}

// kindArgs picks the arguments of a call of f from caller: constants for
// KConst's first parameter (the same at every call), else a mix.
func (f *Func) kindArgs(caller *Func, call *Call, rng *rand.Rand) {
	// Unused parameters stay unused: arguments read the used ones.
	var used []int
	for j, pa := range caller.Params {
		if !pa.Unused {
			used = append(used, j)
		}
	}
	pick := func() int { return used[rng.Intn(len(used))] }
	for j := range f.Params {
		var e Expr
		if f.Kind == KConst && j == 0 {
			e = Expr{Op: "const", K: 17 + int64(len(f.Name))}
		} else {
			switch rng.Intn(6) {
			case 0:
				e = Expr{Op: "const", K: int64(rng.Intn(200))}
			case 1:
				e = Expr{Op: "mul3", P: pick()}
			case 2:
				e = Expr{Op: "add", P: pick(), Q: pick()}
			case 3:
				e = Expr{Op: "xor", P: pick(), K: int64(rng.Intn(255))}
			case 4:
				if call.Times > 1 {
					e = Expr{Op: "loop"}
					break
				}
				fallthrough
			default:
				e = Expr{Op: "param", P: pick()}
			}
		}
		call.Args = append(call.Args, e)
	}
}

// maxCalls is the most calls one call of a root makes (every condition
// true), the root included.
func (p *Program) maxCalls() int {
	memo := make([]int, len(p.Funcs))
	var calls func(i int) int
	calls = func(i int) int {
		if memo[i] > 0 {
			return memo[i]
		}
		n := 1
		for _, c := range p.Funcs[i].Calls {
			n += c.Times * calls(c.Callee)
		}
		memo[i] = n
		return n
	}
	m := 0
	for _, r := range p.Roots {
		m = max(m, calls(r))
	}
	return m * len(p.Roots)
}

// MaxN is the largest N whose record fits the ring.
func (p *Program) MaxN() int { return RingSize / max(1, p.maxCalls()) }

// expr writes e in a C-like syntax (C, Go, Rust and Zig share it once
// wrapping is taken care of by wrap): names are the caller's parameters,
// each converted to a 64-bit signed value by conv.
func expr(e Expr, caller *Func, conv func(string) string, mul3, add string) string {
	pn := func(i int) string { return conv(caller.Params[i].Name) }
	switch e.Op {
	case "const":
		return fmt.Sprint(e.K)
	case "mul3":
		return fmt.Sprintf(mul3, pn(e.P))
	case "add":
		return fmt.Sprintf(add, pn(e.P), pn(e.Q))
	case "xor":
		return fmt.Sprintf("(%s ^ %d)", pn(e.P), e.K)
	case "loop":
		return conv("i")
	}
	return pn(e.P)
}

// Lang is a source language with its builds.
type Lang string

const (
	C    Lang = "c"
	Go   Lang = "go"
	Rust Lang = "rust"
	Zig  Lang = "zig"
)

// Source writes the program in lang.
func (p *Program) Source(lang Lang) string {
	switch lang {
	case Go: // //go:noinline for KNoinline, a method on *S for KMethod
		return p.source(p.goHead, p.goFunc, p.goMain)
	case Rust: // #[inline] for KInline, (always) for KAlways, (never) for KNoinline and KConst
		return p.source(p.rustHead, p.rustFunc, p.rustMain)
	case Zig: // noinline fn for KNoinline and KConst, inline fn for KAlways
		return p.source(p.zigHead, p.zigFunc, p.zigMain)
	}
	return p.cSource()
}

// source writes a program: its head (the record ring, its helpers, the
// names the writer prints), each function, then the writer and main.
func (p *Program) source(head func(*strings.Builder), fn func(*strings.Builder, int), main func(*strings.Builder)) string {
	var b strings.Builder
	head(&b)
	for i := range p.Funcs {
		fn(&b, i)
	}
	main(&b)
	return b.String()
}

// Symbol is the name a probe definition gives f in lang: main.fn03,
// main.(*S).fn04, gen::fn03 (Rust), gen.fn03 (Zig).
func (p *Program) Symbol(lang Lang, f *Func) string {
	switch lang {
	case Go:
		if f.Kind == KMethod {
			return "main.(*S)." + f.Name
		}
		return "main." + f.Name
	case Rust:
		return "prog::" + f.Name
	case Zig:
		return "prog." + f.Name
	}
	return f.Name
}
