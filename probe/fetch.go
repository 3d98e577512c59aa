package probe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// place is where the value reached so far lives: in register pieces (at
// byte off within them) or in memory at the address addr computes, plus off.
type place struct {
	konst *int64     // a constant (DW_OP_const + stack_value)
	value []types.Op // a value an expression computes (see lowering.lower)
	regs  []types.Piece
	mem   bool
	addr  spec.Chain
	off   int64
	t     types.Type
	fault string
	// fails, when set, says why the value's expression fails for some
	// calls (see spec.Fetch.Fails).
	fails string
	// bit, for a bitfield, is where its bits start in the bytes at off
	// (counted from the least significant bit) and how many there are.
	bit *spec.Bitfield
	// acc, when set, says through which fields of which struct off is
	// reached from the address addr computes (see spec.Access); nil for an
	// offset no type fixes (a stack slot) or one CO-RE cannot relocate.
	acc *spec.Access
	// vecWhy says why no general register holds a copy of a value in a
	// vector register (see Resolver.vectorCopy).
	vecWhy string
}

// memChain is the chain that reads memory at the place's address plus
// off: its Derefs, and their Access when any is relocatable, with leaf
// (a member name, or "" for none) ending the last one's fields.
func (pl place) memChain(off int64, leaf string) spec.Chain {
	c := spec.Chain{Reg: pl.addr.Reg, Expr: pl.addr.Expr, Derefs: append(append([]int64{}, pl.addr.Derefs...), pl.off+off)}
	last := spec.Access{}
	if pl.acc != nil && (off == 0 || leaf != "") {
		last = *pl.acc
		last.Fields = slices.Clone(last.Fields)
		if leaf != "" {
			last.Fields = append(last.Fields, leaf)
		}
	}
	acc := append(accessOf(pl.addr, len(pl.addr.Derefs)), last)
	if slices.ContainsFunc(acc, func(a spec.Access) bool { return a.Type != "" }) {
		c.Access = acc
	}
	return c
}

// accessOf is c's Access, n entries, empty ones where c has none.
func accessOf(c spec.Chain, n int) []spec.Access {
	if len(c.Access) == n {
		return slices.Clone(c.Access)
	}
	return make([]spec.Access, n)
}

// rootAccess starts the fields of a pointer's target t: a named struct
// (through typedefs) is the root of a relocatable access, anything else
// none.
func rootAccess(t types.Type) *spec.Access {
	if s, ok := types.Resolve(t).(*types.Struct); ok && s.Name != "" && s.Variants == nil {
		return &spec.Access{Type: s.Name}
	}
	return nil
}

// withField is acc with fields appended, or nil.
func withField(acc *spec.Access, fields ...string) *spec.Access {
	if acc == nil {
		return nil
	}
	c := *acc
	c.Fields = append(slices.Clone(c.Fields), fields...)
	return &c
}

// siteAt is the site a fetch is built for: its kind (spec.SiteEntry, ...)
// and pc, the address where its fetches run, which expressions are
// lowered for (see lowering.lower): the site's own, or for a return site
// the function's entry, where its values are captured into captures,
// which the probe's return sites share (see capture).
type siteAt struct {
	kind     string
	pc       uint64
	captures *[]spec.Chain
}

// fetcher builds the programs that read a probe's arguments at a site
// (siteAt, passed to each call): from a variable's location at the
// site's pc (lowering), a stack slot's stores (slots), or the result's
// place at a return.
type fetcher struct {
	t        *target
	slots    *slotStores
	lowering *lowering
}

// fetch builds the program that reads a at the site at, whose variables
// are vars; an access path the variable's type does not allow is an error
// (see checkPath).
func (fe *fetcher) fetch(fn *types.Func, a Arg, vars []types.Var, at siteAt) (spec.Fetch, error) {
	f, err := fe.fetchArg(fn, a, vars, at)
	if err != nil {
		return f, err
	}
	if strings.Contains(f.Unavailable, "a vector register") && at.kind != spec.SiteReturn && len(a.Path) == 0 {
		if hint := floatHint(fn, a.Base); hint != "" {
			f.Unavailable = strings.Replace(f.Unavailable, vectorAdvice, "", 1) + hint
		}
	}
	return f, nil
}

const vectorAdvice = " (read a field that holds it at %return, or a line where it is in memory)"

// floatHint names, for a float parameter that stays in a vector register,
// where the function may store it: fields of its size, floating-point or
// unsigned (Go's math.Float64bits idiom: valBits), behind the other
// parameters' pointers, to read at %return.
func floatHint(fn *types.Func, name string) string {
	var size int64
	for _, p := range fn.Params {
		if p.Name == name {
			size, _ = types.Sizeof(p.Type)
		}
	}
	var hints []string
	for _, p := range fn.Params {
		if p.Name == name || p.Result || size == 0 {
			continue
		}
		ptr, ok := types.Resolve(p.Type).(*types.Pointer)
		if !ok {
			continue
		}
		s, ok := types.Resolve(ptr.Target).(*types.Struct)
		if !ok {
			continue
		}
		for _, m := range s.Members {
			b, ok := types.Resolve(m.Type).(*types.Base)
			if n, _ := types.Sizeof(m.Type); !ok || n != size || m.Name == "" || (b.Encoding != types.Float && b.Encoding != types.Unsigned) {
				continue
			}
			hints = append(hints, fmt.Sprintf("'%s%%return %s->%s:f%d'", fn.Name, p.Name, m.Name, 8*size))
		}
	}
	if len(hints) == 0 {
		return ""
	}
	return "; where the function stores it, a return probe can read it: " + strings.Join(hints[:min(len(hints), 3)], " or ")
}

func (fe *fetcher) fetchArg(fn *types.Func, a Arg, vars []types.Var, at siteAt) (spec.Fetch, error) {
	f := spec.Fetch{Name: a.Name}
	var pl place
	switch {
	case IsBuiltin(a.Base):
		return builtinFetch(a)
	case strings.HasPrefix(a.Base, "$retval"):
		if at.kind != spec.SiteReturn {
			f.Unavailable = "$retval exists only at %return"
			return f, nil
		}
		loc, t, why := fe.t.retval(fn)
		var i int
		if _, err := fmt.Sscanf(a.Base, "$retval#%d", &i); err == nil {
			loc, t, why = fe.t.goResult(fn, i)
		}
		if why != "" {
			f.Unavailable = why
			return f, nil
		}
		pl = fe.fromLoc(loc, t, at.pc)
	case strings.HasPrefix(a.Base, "%"):
		reg := strings.ToUpper(a.Base[1:])
		if _, ok := fe.t.arch.PtRegs[reg]; !ok { // what a uprobe can read
			f.Unavailable = fmt.Sprintf("%s is not a general register of %s", a.Base, fe.t.arch.Name)
			return f, nil
		}
		pl = place{regs: []types.Piece{{Kind: types.LocReg, Reg: reg, Size: 8}}, t: &types.Base{Name: "u64", ByteSize: 8}}
	default:
		var v *types.Var
		for i := range vars {
			if vars[i].Name == a.Base {
				v = &vars[i] // the innermost scope's comes last
			}
		}
		// Not in scope here: a global of that name, unless it names a
		// parameter (one the compiler left no trace of here is not
		// available, never another variable).
		if v == nil && !isParam(fn.Params, a.Base) {
			if g, ok := fe.t.global(fn.LowPC, a.Base); ok {
				v = &g
			}
		}
		if v == nil {
			f.Unavailable = fmt.Sprintf("%s is not available here", a.Base)
			return f, nil
		}
		pl = fe.fromLoc(v.Loc, v.Type, at.pc)
		if at.kind != spec.SiteReturn && fn.Lang == types.LangGo && pl.fault == "" {
			pl.fault = fe.slots.reusedSlot(at.pc, v.Loc, v.Type)
		}
		if at.kind == spec.SiteReturn && pl.fault == "" {
			pl = capture(pl, at.captures)
		}
	}
	if len(a.Path) > 0 && pl.t != nil {
		if err := checkPath(a.Expr, pl.t, a.Path); err != nil {
			return f, err
		}
	}
	for _, st := range a.Path {
		if pl.konst != nil {
			pl.fault = "the compiler made it a constant here; it has no fields"
		}
		if pl.value != nil && st.Kind == Field {
			pl.fault = "the compiler computes it here (" + types.OpsString(pl.value) + "); it has no fields"
		}
		if pl.fault != "" {
			break
		}
		pl = pl.step(st)
	}
	if pl.fault != "" {
		f.Unavailable = pl.fault
		return f, nil
	}
	f = fe.finish(f, pl, a.Type)
	if f.Unavailable == "" {
		f.Fails = pl.fails
	}
	return f, nil
}

// fromLoc starts a walk at a variable's location, for a site whose
// fetches run at pc.
func (fe *fetcher) fromLoc(l types.Loc, t types.Type, pc uint64) place {
	pl := place{t: t}
	switch {
	case len(l.Pieces) == 0:
		pl.fault = "optimized out here"
	case l.Pieces[0].Kind == types.LocReg:
		for _, p := range l.Pieces {
			if p.Kind != types.LocReg {
				pl.fault = "split between registers and memory (" + l.String() + ")"
				return pl
			}
		}
		pl.regs = l.Pieces
		if p := l.Pieces[0]; len(l.Pieces) == 1 && p.Vector && intLike(t) {
			size, err := types.Sizeof(t)
			if err != nil {
				size = 8
			}
			gpr, _, why := fe.lowering.vectorCopy(pc, p.Reg, size)
			if gpr != "" {
				pl.regs = []types.Piece{{Kind: types.LocReg, Reg: gpr, Size: p.Size}}
			}
			pl.vecWhy = why
		}
	case len(l.Pieces) == 1 && l.Pieces[0].Kind == types.LocConst:
		v := l.Pieces[0].Offset
		pl.konst = &v
	case len(l.Pieces) == 1 && l.Pieces[0].Kind == types.LocMem:
		pl.mem, pl.addr, pl.off = true, spec.Chain{Reg: l.Pieces[0].Reg}, l.Pieces[0].Offset
	case len(l.Pieces) == 1 && exprPiece(l.Pieces[0]):
		ops, addr, why, fails := fe.lowering.lower(l.Pieces[0], t, pc)
		pl.fails = fails
		switch {
		case why != "":
			pl.fault = why
		case addr:
			pl.mem, pl.addr = true, spec.Chain{Expr: ops}
		default:
			pl.value = ops
		}
	default:
		pl.fault = "at " + l.String() + ", which a uprobe cannot read here"
	}
	return pl
}

// step follows one access of the path.
func (pl place) step(st Step) place {
	t := types.Resolve(pl.t)
	if st.Kind == Deref {
		ptr, ok := t.(*types.Pointer)
		if !ok {
			pl.fault = fmt.Sprintf("->%s: %s is not a pointer", st.Name, types.TypeString(pl.t))
			return pl
		}
		pl = pl.load()
		if pl.fault != "" {
			return pl
		}
		pl.t = ptr.Target
		pl.acc = rootAccess(ptr.Target)
		t = types.Resolve(ptr.Target)
	}
	switch st.Kind {
	case Field, Deref:
		s, ok := t.(*types.Struct)
		if !ok {
			pl.fault = fmt.Sprintf(".%s: %s is not a struct", st.Name, types.TypeString(pl.t))
			return pl
		}
		m, path := memberPath(s, st.Name)
		if d := dynamicMember(s, st.Name); m == nil && d != nil {
			pl.fault = fmt.Sprintf("%s.%s: %s", s.Name, st.Name, d.Dynamic)
			return pl
		}
		if m == nil {
			var names []string
			for _, mm := range s.Members {
				names = append(names, mm.Name)
			}
			pl.fault = fmt.Sprintf("%s has no field %s (fields: %s)", s.Name, st.Name, strings.Join(names, ", "))
			return pl
		}
		pl.off += m.ByteOffset()
		pl.t = m.Type
		pl.acc = withField(pl.acc, path...)
		if m.BitSize > 0 {
			pl.bit = &spec.Bitfield{Offset: int64(m.Offset) - 8*m.ByteOffset(), Size: int64(m.BitSize)}
			pl.acc = nil // CO-RE relocates a bitfield's bits otherwise
		}
	case Index:
		switch v := t.(type) {
		case *types.Array:
			es, _ := types.Sizeof(v.Elem)
			if v.Count > 0 && st.Index >= v.Count { // 0 and -1: a trailing array sized at run time
				pl.fault = fmt.Sprintf("[%d]: the array has %d elements", st.Index, v.Count)
				return pl
			}
			pl.off += st.Index * es
			pl.t = v.Elem
			pl.acc = withField(pl.acc, fmt.Sprintf("[%d]", st.Index))
		case *types.Pointer:
			pl = pl.load()
			es, _ := types.Sizeof(v.Target)
			pl.off += st.Index * es
			pl.t = v.Target
			if pl.acc = rootAccess(v.Target); pl.acc != nil {
				pl.acc.Index = st.Index
			}
		default:
			pl.fault = fmt.Sprintf("[%d]: %s is neither an array nor a pointer", st.Index, types.TypeString(pl.t))
		}
	}
	return pl
}

// member finds a field by name, through Go embedded fields.
func member(s *types.Struct, name string) *types.Member {
	m, _ := memberPath(s, name)
	return m
}

// memberPath is member, with the names of the members that lead to it:
// the embedded structs a promoted field is reached through, then its own.
func memberPath(s *types.Struct, name string) (*types.Member, []string) {
	for i := range s.Members {
		if s.Members[i].Name == name {
			return &s.Members[i], []string{name}
		}
	}
	return promoted(s, name)
}

// dynamicMember is s's member name whose place is not fixed by the type
// (types.Dynamic says why), or nil.
func dynamicMember(s *types.Struct, name string) *types.Member {
	for i := range s.Dynamic {
		if s.Dynamic[i].Name == name {
			return &s.Dynamic[i]
		}
	}
	return nil
}

// promoted is a field of a Go struct's embedded struct (not through a
// pointer), at any depth, as Go promotes it: the shallowest wins, and two
// at the same depth are ambiguous (nil). The copy's Offset counts from s.
// load.Package embeds PackagePublic, so pkg->ImportPath is
// pkg->PackagePublic.ImportPath, and the path is [PackagePublic
// ImportPath].
func promoted(s *types.Struct, name string) (*types.Member, []string) {
	type level struct {
		s    *types.Struct
		off  types.Bits
		path []string
	}
	cur := []level{{s, 0, nil}}
	for depth := 0; depth < 8 && len(cur) > 0; depth++ {
		var next []level
		var found *types.Member
		var path []string
		n := 0
		for _, l := range cur {
			for i := range l.s.Members {
				m := &l.s.Members[i]
				if depth > 0 && m.Name == name {
					c := *m
					c.Offset += l.off
					found, n = &c, n+1
					path = append(slices.Clone(l.path), name)
				}
				if es, ok := types.Resolve(m.Type).(*types.Struct); ok && m.Embedded && m.BitSize == 0 {
					next = append(next, level{es, l.off + m.Offset, append(slices.Clone(l.path), m.Name)})
				}
			}
		}
		if n == 1 {
			return found, path
		}
		if n > 1 {
			return nil, nil
		}
		cur = next
	}
	return nil, nil
}

// load reads the pointer the place holds: what follows is in memory at it.
func (pl place) load() place {
	if pl.mem {
		pl.addr = pl.memChain(0, "")
		pl.off, pl.acc = 0, nil
		return pl
	}
	if pl.value != nil { // a pointer an expression computes
		return place{mem: true, addr: spec.Chain{Expr: pl.value}, t: pl.t}
	}
	reg, ok := pieceAt(pl.regs, pl.off, 8)
	if !ok {
		pl.fault = "the pointer is not in one register"
		return pl
	}
	return place{mem: true, addr: spec.Chain{Reg: reg.Reg}, t: pl.t}
}

// memberAt names the member of the struct t that starts at byte off > 0
// (a Go string's len, an interface's data word), or "".
func memberAt(t types.Type, off int64) string {
	s, ok := types.Resolve(t).(*types.Struct)
	if !ok || off == 0 {
		return ""
	}
	for _, m := range s.Members {
		if m.ByteOffset() == off && m.BitSize == 0 && m.Name != "" {
			return m.Name
		}
	}
	return ""
}

// pieceAt is the register piece that holds exactly bytes [off, off+n).
func pieceAt(ps []types.Piece, off, n int64) (types.Piece, bool) {
	var at int64
	for _, p := range ps {
		size := p.Size
		if size == 0 {
			size = 8
		}
		if at == off && (size == n || len(ps) == 1 && n <= size) {
			return p, !p.Vector
		}
		at += size
	}
	return types.Piece{}, false
}

// finish reads the value the place holds as typ (or the type the model
// gives it).
func (fe *fetcher) finish(f spec.Fetch, pl place, typ string) spec.Fetch {
	t := types.Resolve(pl.t)
	if typ = readAs(t, typ); typ == "" {
		return untyped(f, pl, t)
	}
	if pl.bit != nil {
		if typ, f.Bits = bitfieldType(typ, *pl.bit); typ == "" {
			f.Unavailable = fmt.Sprintf("a bitfield of %d bits at bit %d reads as an integer (u, s, x) of at most 8 bytes", pl.bit.Size, pl.bit.Offset)
			return f
		}
	}
	f.Type = typ
	switch typ {
	case "chars":
		if !pl.mem {
			f.Unavailable = "a char array in registers"
			return f
		}
		c, _ := pl.read(t, 0, 1)
		f.Size, f.Chains = min(charArray(t), spec.StringMax), []spec.Chain{c}
	case "string", "iface":
		ptr, why := pl.read(t, 0, 8)
		n, why2 := pl.read(t, 8, 8)
		if why != "" || why2 != "" {
			f.Unavailable = why + why2
			return f
		}
		f.Size, f.Chains = 8, []spec.Chain{ptr, n}
		if typ == "iface" {
			f.Dynamic = fe.t.itabs(pl.t)
		}
	default:
		size := typeSize(typ)
		if typ == "bytes" || typ == "cstring" {
			size = 8
		}
		c, why := pl.read(t, 0, size)
		if why != "" {
			f.Unavailable = why
			return f
		}
		f.Size, f.Chains = size, []spec.Chain{c}
		if typ == "bytes" {
			f.Size, _ = types.Sizeof(pl.t)
		}
	}
	return f
}

// readAs is the type a value of t (resolved) is read as when the
// definition gives typ ("": none): C's char[N] as its text, bounded by N
// and by a NUL; C's char * given :string as its text up to the NUL; with
// no type, t's own (defaultType, "" for none).
func readAs(t types.Type, typ string) string {
	switch n := charArray(t); {
	case n > 0 && (typ == "" || typ == "string"):
		return "chars"
	case typ == "string" && defaultType(t) == "cstring":
		return "cstring"
	case typ == "":
		return defaultType(t)
	}
	return typ
}

// untyped is the fetch of a value of t (resolved) that no type prints: a
// struct or an array in memory, read whole; anything else is unavailable,
// with what to do.
func untyped(f spec.Fetch, pl place, t types.Type) spec.Fetch {
	if pl.mem && pl.konst == nil {
		whole := pl.memChain(0, "")
		switch v := t.(type) {
		case *types.Struct:
			if v.Variants == nil {
				return wholeStruct(f, whole, pl.t)
			}
		case *types.Array:
			if v.Count <= 0 {
				f.Unavailable = fmt.Sprintf("%s has no elements of its own; index it ([0])", types.TypeString(pl.t))
				return f
			}
			return wholeStruct(f, whole, pl.t) // read and printed as a struct is
		}
	}
	if b, ok := t.(*types.Base); ok && b.ByteSize > 8 {
		f.Unavailable = fmt.Sprintf("%s is %d bytes, wider than any number goprobe prints: give a type (:u64 for its low half, :bytes)", types.TypeString(pl.t), b.ByteSize)
		return f
	}
	f.Unavailable = fmt.Sprintf("%s is a %s: name a field, or give a type (:u64, :bytes)", types.TypeString(pl.t), kindOf(t))
	return f
}

// read is the chain that reads the n bytes at off of the place's value,
// of type t (resolved), or why none can.
func (pl place) read(t types.Type, off, n int64) (spec.Chain, string) {
	if pl.konst != nil {
		if off != 0 {
			return spec.Chain{}, "a constant has no fields"
		}
		return spec.Chain{Const: pl.konst}, ""
	}
	if pl.value != nil {
		if off != 0 {
			return spec.Chain{}, "a computed value has no fields"
		}
		return spec.Chain{Expr: pl.value}, ""
	}
	if pl.mem {
		return pl.memChain(off, memberAt(t, off)), ""
	}
	p, ok := pieceAt(pl.regs, pl.off+off, n)
	if !ok {
		for _, q := range pl.regs {
			if q.Vector {
				return spec.Chain{}, fmt.Sprintf("in %s, a vector register, which a uprobe cannot read%s%s", q.Reg, pl.vecWhy, vectorAdvice)
			}
		}
		return spec.Chain{}, "not in one general register"
	}
	return spec.Chain{Reg: p.Reg}, ""
}

// retval is where fn's result is at a RET: the C ABI's return register
// (RAX on amd64) for a C, Rust or Zig integer or pointer, the Go register
// ABI's result registers for Go.
func (t *target) retval(fn *types.Func) (types.Loc, types.Type, string) {
	if fn.Lang == types.LangGo && fn.Decl.File != "" && len(fn.Params) > 0 {
		var res []types.Param
		for _, p := range fn.Params {
			if p.Result {
				res = append(res, p)
			}
		}
		if len(res) == 0 {
			return types.Loc{}, nil, fn.Name + " returns nothing"
		}
		return goResults(fn, res, t)
	}
	if fn.Return == nil && fn.Decl.File == "" && len(fn.Params) == 0 { // no debug info: the ABI's return register
		return types.Loc{Pieces: []types.Piece{{Kind: types.LocReg, Reg: t.arch.Ret, Size: 8}}}, &types.Pointer{ByteSize: 8}, ""
	}
	if fn.Return == nil {
		return types.Loc{}, nil, fn.Name + " returns nothing"
	}
	size, _ := types.Sizeof(fn.Return)
	if b, ok := types.Resolve(fn.Return).(*types.Base); ok && b.Encoding == types.Float {
		return types.Loc{}, nil, fmt.Sprintf("a floating-point result is in %s, a vector register, which a uprobe cannot read", t.arch.FloatRet)
	}
	if size > 8 {
		return types.Loc{}, nil, "a result larger than 8 bytes is returned in memory or in two registers"
	}
	return types.Loc{Pieces: []types.Piece{{Kind: types.LocReg, Reg: t.arch.Ret, Size: size}}}, fn.Return, ""
}

// capture turns a parameter's place at entry into the place "captured
// value N": the entry program saves the parameter's 8-byte value, and the
// return site's chain continues from it; captures holds the values saved
// so far, one for each distinct chain.
func capture(pl place, captures *[]spec.Chain) place {
	var c spec.Chain
	switch {
	case pl.konst != nil:
		return pl
	case pl.mem:
		c = pl.memChain(0, "")
	case pl.value != nil:
		c = spec.Chain{Expr: pl.value}
	case len(pl.regs) == 1 && !pl.regs[0].Vector:
		c = spec.Chain{Reg: pl.regs[0].Reg}
	default:
		pl.fault = "only a parameter of one register can be kept until %return (" + types.Loc{Pieces: pl.regs}.String() + ")"
		return pl
	}
	idx := -1
	for i, have := range *captures {
		if fmt.Sprint(have) == fmt.Sprint(c) {
			idx = i
		}
	}
	if idx < 0 {
		idx = len(*captures)
		*captures = append(*captures, c)
	}
	size := int64(8)
	if len(pl.regs) == 1 && pl.regs[0].Size > 0 {
		size = pl.regs[0].Size
	}
	return place{regs: []types.Piece{{Kind: types.LocReg, Reg: fmt.Sprintf("@%d", idx), Size: size}}, t: pl.t}
}
