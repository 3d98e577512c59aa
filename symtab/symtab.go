// Package symtab is the project's one reader of ELF symbol tables: the
// function symbols of .symtab and .dynsym of a file and of its separate
// debug file, merged, without symbol versions (malloc@@GLIBC_2.2.5 is
// malloc), with every alias of an address kept (free and __libc_free) and
// GNU indirect functions marked (Read); and the data symbols (Objects), such
// as the go:itab tables that name a Go interface value's dynamic type.
package symtab

import (
	"cmp"
	"debug/elf"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/naming"
)

// Symbol is one function symbol.
type Symbol struct {
	// Name is the symbol without its version; Version is what followed
	// the @ or @@ ("" for none).
	Name    string
	Version string
	Addr    uint64 // virtual address
	Size    uint64 // bytes; 0 when the symbol table gives none
	Local   bool   // STB_LOCAL: a static function, maybe one of several
	IFunc   bool   // STT_GNU_IFUNC: Addr is the resolver
	Dynamic bool   // from .dynsym
}

// Table is a file's function symbols in address order (then by name).
type Table struct {
	Syms   []Symbol
	byName map[string][]int
	// byDemangled indexes the symbols by demangled name, once asked.
	demangleOnce sync.Once
	byDemangled  map[string][]int
}

// Read reads the function symbols of files (the named file, then its
// separate debug file): .symtab and .dynsym of each. The same name at the
// same address is kept once, with the first file's fields (and the first
// size and version given). A process reads each file's symbols once: a
// later Read of files with the same identities (elfx.File.Stamp) returns
// the same *Table, which no caller changes.
func Read(files ...*elfx.File) *Table {
	files = slices.DeleteFunc(slices.Clone(files), func(ef *elfx.File) bool { return ef == nil })
	if len(files) == 0 {
		return newTable(nil)
	}
	t := fileTable(files[0])
	for i, ef := range files[1:] {
		t = recall(files[:i+2], func() *Table { return merge(t, fileTable(ef)) })
	}
	return t
}

// fileTable is the symbols of one file.
func fileTable(ef *elfx.File) *Table {
	return recall([]*elfx.File{ef}, func() *Table { return readFile(ef) })
}

// recall returns the table of files made last (see recent), or makes it.
func recall(files []*elfx.File, build func() *Table) *Table {
	key, ok := tablesKey(files)
	if !ok {
		return build()
	}
	recent.Lock()
	for _, r := range recent.tables {
		if r.key == key {
			recent.Unlock()
			return r.t
		}
	}
	recent.Unlock()
	t := build() // unlocked: building the merged table reads each file's
	recent.Lock()
	defer recent.Unlock()
	recent.tables = append(recent.tables, readTable{key, t})
	if len(recent.tables) > maxRecent {
		recent.tables = recent.tables[1:]
	}
	return t
}

// recent holds the tables Read made last, by their files' identities: a
// goprobe run reads the symbols of a binary and of its debug file in four
// places (resolving, indirect functions, the models proving its sites),
// each opening the files anew.
var recent struct {
	sync.Mutex
	tables []readTable
}

type readTable struct {
	key string
	t   *Table
}

// maxRecent bounds the tables recent keeps (a test process reads many
// files).
const maxRecent = 6

// tablesKey is the identities of files, in order; false when one has none
// (read from memory, not a file).
func tablesKey(files []*elfx.File) (string, bool) {
	var b strings.Builder
	for _, ef := range files {
		id, ok := ef.Stamp()
		if !ok {
			return "", false
		}
		b.WriteString(id)
		b.WriteByte(0)
	}
	return b.String(), true
}

// bySymbol orders symbols by address, then name.
func bySymbol(a, b Symbol) int {
	if c := cmp.Compare(a.Addr, b.Addr); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// readFile reads the function symbols of ef, .symtab then .dynsym.
func readFile(ef *elfx.File) *Table {
	type key struct {
		name string
		addr uint64
	}
	var out []Symbol
	seen := map[key]int{}
	for _, dyn := range []bool{false, true} {
		var syms []elf.Symbol
		if dyn {
			syms, _ = ef.DynamicSymbols()
		} else {
			syms, _ = ef.Symbols()
		}
		for _, s := range syms {
			typ := elf.ST_TYPE(s.Info)
			if (typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC) || s.Value == 0 || s.Section == elf.SHN_UNDEF {
				continue
			}
			name, ver := s.Name, ""
			if i := indexAt(name); i >= 0 {
				name, ver = s.Name[:i], trimAt(s.Name[i:])
			}
			if name == "" {
				continue
			}
			k := key{name, s.Value}
			if i, ok := seen[k]; ok {
				fill(&out[i], Symbol{Size: s.Size, Version: ver})
				continue
			}
			seen[k] = len(out)
			out = append(out, Symbol{Name: name, Version: ver, Addr: s.Value, Size: s.Size,
				Local: elf.ST_BIND(s.Info) == elf.STB_LOCAL, IFunc: typ == elf.STT_GNU_IFUNC, Dynamic: dyn})
		}
	}
	slices.SortStableFunc(out, bySymbol)
	return newTable(out)
}

// fill gives s the size and version of o, a later symbol of the same
// name and address, where s has none.
func fill(s *Symbol, o Symbol) {
	if s.Size == 0 {
		s.Size = o.Size
	}
	if s.Version == "" {
		s.Version = o.Version
	}
}

// merge is the symbols of a and then b, both in order, each name at an
// address once: a's symbol, given b's size and version where it has none.
func merge(a, b *Table) *Table {
	out := make([]Symbol, 0, len(a.Syms)+len(b.Syms))
	i, j := 0, 0
	for i < len(a.Syms) || j < len(b.Syms) {
		switch {
		case j == len(b.Syms):
			out = append(out, a.Syms[i])
			i++
		case i == len(a.Syms):
			out = append(out, b.Syms[j])
			j++
		default:
			switch c := bySymbol(a.Syms[i], b.Syms[j]); {
			case c < 0:
				out = append(out, a.Syms[i])
				i++
			case c > 0:
				out = append(out, b.Syms[j])
				j++
			default:
				s := a.Syms[i]
				fill(&s, b.Syms[j])
				out = append(out, s)
				i++
				j++
			}
		}
	}
	return newTable(out)
}

// newTable is the table of syms, in order.
func newTable(syms []Symbol) *Table {
	t := &Table{Syms: syms, byName: make(map[string][]int, len(syms))}
	for i, s := range syms {
		t.byName[s.Name] = append(t.byName[s.Name], i)
	}
	return t
}

func indexAt(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			return i
		}
	}
	return -1
}

func trimAt(s string) string {
	for len(s) > 0 && s[0] == '@' {
		s = s[1:]
	}
	return s
}

// At returns the symbols at exactly addr (aliases of one another).
func (t *Table) At(addr uint64) []Symbol {
	i := sort.Search(len(t.Syms), func(i int) bool { return t.Syms[i].Addr >= addr })
	j := i
	for j < len(t.Syms) && t.Syms[j].Addr == addr {
		j++
	}
	return t.Syms[i:j]
}

// Covering returns the symbol whose [Addr, Addr+Size) holds addr, the one
// starting nearest below it; ok is false when none does.
func (t *Table) Covering(addr uint64) (Symbol, bool) {
	i := sort.Search(len(t.Syms), func(i int) bool { return t.Syms[i].Addr > addr })
	for k := i - 1; k >= 0 && k >= i-64; k-- {
		s := t.Syms[k]
		if addr >= s.Addr && addr < s.Addr+s.Size {
			return s, true
		}
	}
	return Symbol{}, false
}

// Named returns the symbols called name (several for a static function
// defined in several units).
func (t *Table) Named(name string) []Symbol {
	idx := t.byName[name]
	out := make([]Symbol, len(idx))
	for k, i := range idx {
		out[k] = t.Syms[i]
	}
	return out
}

// Demangled returns the symbols whose name demangles (naming.Demangle) to
// name: a C++ or Rust function as users write it, without its parameter
// list, so several overloads may answer; not the compiler's clones of a
// function (.cold, .constprop.0), which demangle to its name too. The
// symbols are demangled on the first call.
func (t *Table) Demangled(name string) []Symbol {
	t.demangleOnce.Do(t.demangle)
	idx := t.byDemangled[name]
	out := make([]Symbol, len(idx))
	for k, i := range idx {
		out[k] = t.Syms[i]
	}
	return out
}

func (t *Table) demangle() {
	names := make([]string, len(t.Syms))
	for i := range t.Syms {
		if _, _, clone := naming.Clone(t.Syms[i].Name); !clone {
			names[i], _ = naming.Demangle(t.Syms[i].Name)
		}
	}
	t.byDemangled = map[string][]int{}
	for i, n := range names {
		if n != "" {
			t.byDemangled[n] = append(t.byDemangled[n], i)
		}
	}
}

// Plainest is the alias to show among syms (see naming.Plainer).
func Plainest(syms []Symbol) Symbol {
	best := syms[0]
	for _, s := range syms[1:] {
		if naming.Plainer(s.Name, best.Name) {
			best = s
		}
	}
	return best
}

// Objects are the named data symbols (STT_OBJECT) of files' .symtab, or
// .dynsym where a file has no .symtab, without versions: what the linker
// names in data, such as Go's go:itab.TYPE,IFACE tables.
func Objects(files ...*elfx.File) []Symbol {
	var out []Symbol
	for _, ef := range files {
		if ef == nil {
			continue
		}
		syms, _ := ef.Symbols()
		if len(syms) == 0 {
			syms, _ = ef.DynamicSymbols()
		}
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) != elf.STT_OBJECT || s.Value == 0 || s.Section == elf.SHN_UNDEF {
				continue
			}
			out = append(out, Symbol{Name: naming.StripVersion(s.Name), Addr: s.Value, Size: s.Size,
				Local: elf.ST_BIND(s.Info) == elf.STB_LOCAL})
		}
	}
	return out
}

// Entry is a function symbol where its table lists it.
type Entry struct {
	Index int // in the table: 1 is the first after the null symbol
	Name  string
	Addr  uint64
	Size  uint64
}

// Section lists the functions defined in the symbol table section (.symtab
// or .dynsym) of ef, in the table's order, names as the table spells them
// (pfunct --symtab), and how many symbols the table holds. Errors: the
// section is neither, or absent.
func Section(ef *elfx.File, section string) ([]Entry, int, error) {
	var syms []elf.Symbol
	var err error
	switch section {
	case ".symtab":
		syms, err = ef.Symbols()
	case ".dynsym":
		syms, err = ef.DynamicSymbols()
	default:
		return nil, 0, fmt.Errorf("symbol table %s: want .symtab or .dynsym", section)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", section, err)
	}
	var out []Entry
	for i, s := range syms {
		if t := elf.ST_TYPE(s.Info); (t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC) && s.Section != elf.SHN_UNDEF {
			out = append(out, Entry{Index: i + 1, Name: s.Name, Addr: s.Value, Size: s.Size})
		}
	}
	return out, len(syms) + 1, nil
}
