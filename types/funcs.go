package types

import (
	"fmt"
	"strings"
)

// Func is a function as the binary knows it: a DWARF subprogram joined
// with the symbol table, with the places its body was inlined.
type Func struct {
	// Name is the name as the language writes it (Go pkg.(*T).M, a
	// demangled Rust or C++ path); Linkage is the symbol name.
	Name    string
	Linkage string
	Lang    Lang
	// LowPC is the entry address of the out-of-line copy (the address a
	// call jumps to: its symbol's, never a .cold fragment's, even where a
	// cold range lies lower) and Size its length in bytes over all its
	// Ranges; both 0 for a function that exists only inlined or cloned.
	LowPC    uint64
	Size     uint64
	Ranges   [][2]uint64
	Decl     Decl
	External bool
	// Aliases are the other symbol names of the out-of-line copy (free
	// for __libc_free), without symbol versions.
	Aliases []string
	// IFunc marks a GNU indirect function: its symbol's address is the
	// resolver that picks the implementation at load time.
	IFunc bool
	// Variadic marks a C or C++ function taking ... after its Params.
	Variadic bool
	// SymbolOnly marks code that only a symbol table (or .gopclntab)
	// names: no debug info describes its parameters or expansions.
	SymbolOnly bool
	// LostDIE, for SymbolOnly code in the address ranges of a compile
	// unit whose DIEs a reader lost in part (a DIE it could not read), is
	// the offset in .debug_info of that DIE: what the debug info said of
	// the function may be among those lost, its prototype and source line
	// unknown. 0 otherwise.
	LostDIE uint64 `json:",omitempty"`
	// DeclaredInline is C/C++ inline or Rust #[inline] as DW_AT_inline
	// records it (DW_INL_declared_*).
	DeclaredInline bool
	Inlined        []*InlineSite
	Clones         []Clone
	// Instances are the concrete copies DWARF describes (the out-of-line
	// copy, clones, .part pieces), each with the expansions nested in it;
	// the model of code reads them, views read LowPC, Ranges and Clones.
	Instances []*Instance `json:"-"`
	// Params are the parameters in declaration order with their locations
	// at LowPC (filled when FuncOptions ask for them); Return is the
	// result type of C, C++, Rust and Zig functions (nil: void).
	Params []Param
	Return Type
	// Tags are the BTF declaration tags (btf_decl_tag("...")) on the
	// function and its parameters, nil when it has none.
	Tags *FuncTags
}

// FuncTags are the declaration tags of a function: its own, and each
// parameter's by index (Params[i], nil or short when some have none).
type FuncTags struct {
	Func   []string
	Params [][]string
}

// Param returns the tags of parameter i.
func (t *FuncTags) Param(i int) []string {
	if t == nil || i >= len(t.Params) {
		return nil
	}
	return t.Params[i]
}

// InlineSite is one expansion of a function's body inside another.
type InlineSite struct {
	// Caller is the function the body was inlined into (the outermost
	// out-of-line function).
	Caller     string
	EntryPC    uint64
	Ranges     [][2]uint64
	CallFile   string
	CallLine   int
	CallColumn int
	// Callee is the function whose body this is; Parent the expansion
	// that holds this one (nil for one directly in its out-of-line host):
	// the inline tree as the DIEs nest.
	Callee *Func       `json:"-"`
	Parent *InlineSite `json:"-"`
}

// Instance is one concrete copy of a function's code: a DW_TAG_subprogram
// with code, with the expansions nested in it at any depth (in DIE order).
// Entry is where calls enter: DW_AT_entry_pc or DW_AT_low_pc as the loader
// read it, corrected by the model of code from the symbol table. Kind is
// "" for the out-of-line copy, else the Clone kind the model gave it.
type Instance struct {
	Entry  uint64
	Ranges [][2]uint64
	Sites  []*InlineSite
	Kind   string
	Symbol string
	// Params, for a copy other than the out-of-line one (a clone), are
	// the parameters its own entry lists, located at Entry, filled with
	// the function's Params: GCC's .constprop.N drops a parameter it
	// passes as a constant (LocConst here), .isra.N replaces some.
	Params []Param
}

// Clone is a compiler-made copy or piece of a function: GCC's .part.N
// (the rest of a partially inlined function), .cold (its unlikely code),
// .isra.N and .constprop.N (full copies with changed parameters).
type Clone struct {
	Symbol  string `json:"symbol"`
	Address uint64 `json:"address"`
	Size    uint64 `json:"size"`
	Kind    string `json:"kind"` // part, cold, isra, constprop, lto_priv, clone, copy
	// Ranges is the clone's code where DWARF describes it (a clone can be
	// split hot and cold too); empty for a symbol alone.
	Ranges [][2]uint64 `json:"ranges,omitempty"`
}

// Call reports whether entering the clone's code is a call of the
// function: true for full copies (isra, constprop, ...), false for
// continuations (part, cold), which run inside a call already counted.
func (c Clone) Call() bool { return c.Kind != "part" && c.Kind != "cold" }

// Param is a formal parameter (or, for Go, a named or ~rN result) with
// where it lives at the function's entry.
type Param struct {
	Name string
	Type Type
	// Result is set for Go results (DW_AT_variable_parameter), which have
	// no value at entry.
	Result bool
	Loc    Loc
	// PC is the address where Loc holds: the function's entry, or, for a
	// value unoptimised code keeps in a frame slot that the prologue fills
	// (gcc -O0, Zig Debug), the first address after the prologue.
	PC uint64
}

// Var is a parameter or local variable visible at some address, with where
// it lives there. Inline is the function whose inlined body declares it, or
// "" for the function's own.
type Var struct {
	Name   string
	Type   Type
	Param  bool
	Inline string
	Loc    Loc
	// DeclLine is the source line that declares it (0: not given).
	DeclLine int
}

// Loc is where a value lives at one address: one piece for a value in a
// single place, several (in increasing offset order) for a value split
// across registers, as Go's register ABI passes strings, slices and small
// structs. A Loc with no pieces means the value is not available there
// (optimised out).
type Loc struct {
	Pieces []Piece
	// Whole says the debug info gives this one location for the whole
	// scope (DW_AT_const_value, or DW_AT_location as one expression),
	// not the entry of a location list that holds at this address.
	Whole bool
	// From and To bound the addresses around this one where a location
	// list gives this location without a break (the entry that holds
	// here, joined with entries end to end that give the same); 0 for a
	// location of the whole scope or a list's default.
	From, To uint64
}

// LocKind says what a Piece is.
type LocKind uint8

const (
	// LocReg: the value is in register Reg.
	LocReg LocKind = iota
	// LocMem: the value is in memory at Reg + Offset (DW_OP_bregN).
	LocMem
	// LocCFA: the value is in memory at the canonical frame address +
	// Offset (DW_OP_fbreg with a DW_OP_call_frame_cfa frame base).
	LocCFA
	// LocAddr: the value is in memory at the static address Offset.
	LocAddr
	// LocConst: the value is the constant Offset (DW_OP_constN +
	// DW_OP_stack_value, DW_OP_implicit_value of up to 8 bytes).
	LocConst
	// LocEntry: the value the register Reg had at entry
	// (DW_OP_entry_value): readable at the entry, not afterwards.
	LocEntry
	// LocExpr: an expression this project does not evaluate; Expr holds
	// its text.
	LocExpr
	// LocValue: the value is what Ops compute (an expression ending in
	// DW_OP_stack_value: a caller's x*3 passed to an inlined callee).
	LocValue
	// LocAt: the value is in memory at the address Ops compute.
	LocAt
)

// Piece is one part of a Loc.
type Piece struct {
	Kind   LocKind
	Reg    string // register name as the architecture spells it (RAX, X0)
	Offset int64
	// Size is the piece's size in bytes (DW_OP_piece); 0 for the whole
	// value.
	Size int64
	// Vector is set for SIMD/FP registers (XMM, V): pt_regs does not hold
	// them, so a uprobe cannot read the value.
	Vector bool
	Expr   string
	// Ops is the expression of a LocValue or LocAt piece.
	Ops []Op `json:",omitempty"`
}

// Readable reports whether a uprobe can read the value at this address
// from pt_regs and memory alone.
func (l Loc) Readable() bool {
	if len(l.Pieces) == 0 {
		return false
	}
	for _, p := range l.Pieces {
		if p.Vector || p.Kind == LocExpr {
			return false
		}
	}
	return true
}

// String spells the location: "RAX", "RAX:8 RBX:8" (pieces with sizes),
// "[RSP+16]", "[CFA+8]", "[0x4d2a60]", "const 3", "entry(RDI)", "(RDI*3)+1"
// and "[[RSP+8]+16]" (expressions), "optimized out"; a vector register is followed by "(not readable by
// uprobe)".
func (l Loc) String() string {
	if len(l.Pieces) == 0 {
		return "optimized out"
	}
	var b strings.Builder
	unreadable := false
	for i, p := range l.Pieces {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch p.Kind {
		case LocReg:
			b.WriteString(p.Reg)
		case LocMem:
			fmt.Fprintf(&b, "[%s%+d]", p.Reg, p.Offset)
		case LocCFA:
			fmt.Fprintf(&b, "[CFA%+d]", p.Offset)
		case LocAddr:
			fmt.Fprintf(&b, "[%#x]", uint64(p.Offset))
		case LocConst:
			fmt.Fprintf(&b, "const %d", p.Offset)
		case LocEntry:
			fmt.Fprintf(&b, "entry(%s)", p.Reg)
		case LocExpr:
			b.WriteString("expr(" + p.Expr + ")")
		case LocValue:
			b.WriteString(OpsString(p.Ops))
		case LocAt:
			b.WriteString("[" + OpsString(p.Ops) + "]")
		}
		if p.Size > 0 && len(l.Pieces) > 1 {
			fmt.Fprintf(&b, ":%d", p.Size)
		}
		unreadable = unreadable || p.Vector
	}
	if unreadable {
		b.WriteString(" (not readable by uprobe)")
	}
	return b.String()
}

// Line is one row of a line table: the address where code for File:Line
// (and Column, 0 when the producer records none) begins. Stmt marks rows
// the compiler flags as statement boundaries, the places a line probe
// should go.
type Line struct {
	Addr   uint64
	File   string
	Line   int
	Column int
	Stmt   bool
	// PrologueEnd marks where the compiler says the function's prologue
	// ends (DW_LNS_set_prologue_end): the first address where values the
	// prologue spills to the frame are there.
	PrologueEnd bool
}

// Global is a variable at a static address: C's globals and file statics,
// Go's package variables, Rust's and Zig's statics. Addr is the virtual
// address the file gives it; External is set for one other files may name
// (DW_AT_external).
type Global struct {
	Name     string
	Type     Type
	Addr     uint64
	External bool
	// Tags are the BTF declaration tags (btf_decl_tag("...")) on it.
	Tags []string
	// Lang is the language of the unit that defines it.
	Lang Lang
}
