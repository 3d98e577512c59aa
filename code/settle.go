package code

import (
	"slices"
	"sort"
	"strings"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/symtab"
	"github.com/binscope/binscope/types"
)

// makesClones reports whether the producer of fn's code names clones with
// GCC's suffixes: not Go (maps.clone is a Go function), Rust or Zig.
func makesClones(l types.Lang) bool {
	switch l {
	case types.LangGo, types.LangRust, types.LangZig:
		return false
	}
	return true
}

// symKind is the clone kind a symbol's name gives, "" for none.
func symKind(s symtab.Symbol, l types.Lang) string {
	if !makesClones(l) {
		return ""
	}
	if _, kind, ok := naming.Clone(s.Name); ok {
		return kind
	}
	return ""
}

// settle gives every DWARF function its true instances: which concrete
// copy is the out-of-line one and where calls enter it (its symbol's
// address, never a .cold fragment's), which copies are clones and which
// pieces continue a call, and the symbol names of its entry.
func (m *Model) settle(fns []*types.Func) {
	for _, fn := range fns {
		fn.LowPC, fn.Size, fn.Ranges, fn.Clones = 0, 0, nil, nil
		for _, inst := range fn.Instances {
			m.settleInstance(fn, inst)
			switch {
			case inst.Kind == "" && fn.LowPC == 0:
				dwarf.SetEntry(fn, inst)
			default:
				kind := inst.Kind
				if kind == "" {
					kind = "copy" // a second out-of-line copy
				}
				fn.Clones = append(fn.Clones, types.Clone{Symbol: inst.Symbol, Address: inst.Entry,
					Size: span(inst.Ranges), Kind: kind, Ranges: inst.Ranges})
			}
			// A piece of the instance that a .cold symbol names.
			for _, r := range inst.Ranges {
				if r[0] <= inst.Entry && inst.Entry < r[1] {
					continue
				}
				for _, s := range m.Syms.At(r[0]) {
					if symKind(s, fn.Lang) == "cold" {
						fn.Clones = append(fn.Clones, types.Clone{Symbol: s.Name, Address: r[0], Size: r[1] - r[0], Kind: "cold"})
						break
					}
				}
			}
			for _, r := range inst.Ranges {
				m.hosts = append(m.hosts, host{lo: r[0], hi: r[1], fn: fn, inst: inst})
			}
		}
		if fn.LowPC != 0 && fn.Lang == types.LangGo {
			goWrapperName(fn, m.Syms.At(fn.LowPC))
		}
		if fn.LowPC != 0 {
			for _, s := range m.Syms.At(fn.LowPC) {
				if s.IFunc {
					fn.IFunc = true
				}
				if s.Name != fn.Name && s.Name != fn.Linkage && symKind(s, fn.Lang) == "" {
					fn.Aliases = append(fn.Aliases, s.Name)
				}
			}
		}
		sort.SliceStable(fn.Clones, func(i, j int) bool { return fn.Clones[i].Address < fn.Clones[j].Address })
	}
	m.funcs = fns
	slices.SortStableFunc(m.funcs, dwarf.ByAddress)
}

// goWrapperName gives a Go function whose symbol is NAME.abi0 (an
// assembly function, or the assembly-ABI wrapper of a Go function) that
// symbol as its linkage name. Its name stays the one Go's tracebacks and
// pprof print (runtime.goexit); where a Go function of the same name
// exists, that one owns the name in lookups (see index).
func goWrapperName(fn *types.Func, syms []symtab.Symbol) {
	for _, s := range syms {
		if s.Name == fn.Name {
			return
		}
	}
	for _, s := range syms {
		if s.Name == fn.Name+".abi0" {
			fn.Linkage = s.Name
		}
	}
}

// settleInstance finds where calls enter inst and what it is. The entry is
// a symbol at the loader's entry or at the start of one of the instance's
// ranges that is not a continuation (.cold, .part); its name says whether
// the instance is a clone (.constprop.0, .isra.0) or a piece (.part.0).
// Without such a symbol the loader's entry stands (DW_AT_entry_pc,
// DW_AT_low_pc, or the first range listed).
func (m *Model) settleInstance(fn *types.Func, inst *types.Instance) {
	starts := []uint64{inst.Entry}
	for _, r := range inst.Ranges {
		if r[0] != inst.Entry {
			starts = append(starts, r[0])
		}
	}
	var piece *symtab.Symbol
	for _, a := range starts {
		syms := m.Syms.At(a)
		var plain, clone *symtab.Symbol
		for i := range syms {
			s := &syms[i]
			switch kind := symKind(*s, fn.Lang); {
			case kind == "":
				if plain == nil || s.Name == fn.Linkage || s.Name == fn.Name {
					plain = s
				}
			case !naming.ContinuesCall(kind):
				if clone == nil {
					clone = s
				}
			case kind == "part" && piece == nil:
				piece = s
			}
		}
		if plain != nil {
			inst.Entry, inst.Kind, inst.Symbol = a, "", plain.Name
			return
		}
		if clone != nil {
			_, kind, _ := naming.Clone(clone.Name)
			inst.Entry, inst.Kind, inst.Symbol = a, kind, clone.Name
			return
		}
	}
	if piece != nil {
		inst.Entry, inst.Kind, inst.Symbol = piece.Addr, "part", piece.Name
	}
}

func span(rs [][2]uint64) uint64 {
	var n uint64
	for _, r := range rs {
		n += r[1] - r[0]
	}
	return n
}

// addSymbolFuncs adds the code that only symbols name (no DWARF covers
// it: crt files, assembly, a library whose debug file describes only part
// of it): one function per address, its aliases kept, demangled; a clone
// symbol of a known function (foo.cold) becomes that function's clone.
// have are functions already known by address (from .gopclntab).
func (m *Model) addSymbolFuncs(have []*types.Func) {
	known := make(map[uint64]bool, len(have))
	for _, fn := range have {
		known[fn.LowPC] = true
	}
	// byName finds the function a clone's symbol was cut from: made when
	// the first such symbol comes (most files have none left once the
	// DWARF functions are settled), from the functions before this call
	// and then the symbols' own as they were added.
	var byName map[string]*types.Func
	n0 := len(m.funcs)
	named := func() map[string]*types.Func {
		if byName != nil {
			return byName
		}
		byName = make(map[string]*types.Func, 2*len(m.funcs))
		for _, fn := range m.funcs[:n0] {
			if fn.Linkage != "" {
				byName[fn.Linkage] = fn
			}
			if _, ok := byName[fn.Name]; !ok {
				byName[fn.Name] = fn
			}
		}
		for _, fn := range m.funcs[n0:] {
			if _, ok := byName[fn.Linkage]; !ok {
				byName[fn.Linkage] = fn
			}
		}
		return byName
	}
	goFile := len(have) > 0
	syms := m.Syms.Syms
	var more []host
	defer func() { m.hosts = append(m.hosts, more...) }()
	for i := 0; i < len(syms); {
		j := i
		for j < len(syms) && syms[j].Addr == syms[i].Addr {
			j++
		}
		group := syms[i:j]
		i = j
		addr := group[0].Addr
		if known[addr] || m.covered(addr) {
			continue
		}
		var size uint64
		for _, s := range group {
			size = max(size, s.Size)
		}
		best := symtab.Plainest(group)
		if !goFile {
			if base, kind, ok := naming.Clone(best.Name); ok {
				if fn := named()[base]; fn != nil && size > 0 {
					fn.Clones = append(fn.Clones, types.Clone{Symbol: best.Name, Address: addr, Size: size, Kind: kind,
						Ranges: [][2]uint64{{addr, addr + size}}})
					more = append(more, host{lo: addr, hi: addr + size, fn: fn})
					continue
				}
			}
		}
		fn := &types.Func{Name: naming.Display(best.Name), Linkage: best.Name, LowPC: addr, Size: size,
			External: !best.Local, Lang: langOfSymbol(best.Name), SymbolOnly: true}
		if m.DWARF != nil {
			if bad, lost := m.DWARF.LostAt(addr); lost {
				fn.LostDIE = uint64(bad)
			}
		}
		if size > 0 {
			fn.Ranges = [][2]uint64{{addr, addr + size}}
			more = append(more, host{lo: addr, hi: addr + size, fn: fn})
		}
		for _, s := range group {
			fn.IFunc = fn.IFunc || s.IFunc
			if s.Name != best.Name {
				fn.Aliases = append(fn.Aliases, s.Name)
			}
		}
		m.funcs = append(m.funcs, fn)
		if byName != nil {
			if _, ok := byName[best.Name]; !ok {
				byName[best.Name] = fn
			}
		}
	}
}

// langOfSymbol guesses a language from a symbol's mangling: Rust's v0
// (_R) and legacy (_ZN...17h<hash>E) manglings, else C++ for _Z.
func langOfSymbol(sym string) types.Lang {
	n := len(sym)
	switch {
	case strings.HasPrefix(sym, "_R"):
		return types.LangRust
	case strings.HasPrefix(sym, "_ZN") && n > 20 && sym[n-1] == 'E' && sym[n-20:n-17] == "17h":
		return types.LangRust
	case strings.HasPrefix(sym, "_Z"):
		return types.LangCPlusPlus
	}
	return types.LangUnknown
}

// covered reports whether some host range holds addr.
func (m *Model) covered(addr uint64) bool {
	_, ok := m.hostAt(addr)
	return ok
}
