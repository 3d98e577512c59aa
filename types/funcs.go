package types

// Func is a function as the binary knows it: a DWARF subprogram joined
// with the symbol table, with the places its body was inlined.
type Func struct {
	// Name is the name as the language writes it (Go pkg.(*T).M, a
	// demangled Rust or C++ path); Linkage is the symbol name.
	Name    string
	Linkage string
	Lang    Lang
	// LowPC is the entry address of the out-of-line copy and Size its
	// length in bytes; both 0 for a function that exists only inlined.
	LowPC    uint64
	Size     uint64
	Ranges   [][2]uint64
	Decl     Decl
	External bool
	// DeclaredInline is C/C++ inline or Rust #[inline] as DW_AT_inline
	// records it (DW_INL_declared_*).
	DeclaredInline bool
	Inlined        []InlineSite
	Clones         []Clone
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
}

// Clone is a compiler-made copy or piece of a function: GCC's .part.N
// (the rest of a partially inlined function), .cold (its unlikely code),
// .isra.N and .constprop.N (full copies with changed parameters).
type Clone struct {
	Symbol  string `json:"symbol"`
	Address uint64 `json:"address"`
	Size    uint64 `json:"size"`
	Kind    string `json:"kind"` // part, cold, isra, constprop, lto_priv, clone
}
