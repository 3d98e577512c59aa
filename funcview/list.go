package funcview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/types"
)

// Show is what a listing prints of each function.
type Show int

const (
	ShowNames      Show = iota // the name (pfunct)
	ShowPrototypes             // the prototype as pfunct -P prints it (PfunctLine)
	ShowSizes                  // name: size, out-of-line functions only (-s)
	ShowNrParams               // name: number of parameters (-p)
	ShowInline                 // every inline expansion and clone (pfunct -i)
	ShowJSON                   // one JSON array of every function's facts
	ShowLocations              // the prototype with parameter locations (--locations)
)

// protos reports whether s prints one prototype line per function.
func (s Show) protos() bool { return s == ShowPrototypes || s == ShowLocations }

// line is fn's line in s, a Show whose protos() holds.
func (s Show) line(fn *types.Func) string {
	if s == ShowLocations {
		return protoLine(fn)
	}
	return PfunctLine(fn)
}

// Listing says which functions List shows, with pfunct's filters, and how.
type Listing struct {
	Names       []string // -f: functions by any name the model knows; none means all
	Externals   bool     // -E: external functions only
	Class       string   // -c: functions taking a pointer to this type
	CCInlined   bool     // -H: C/C++ functions inlined though not declared inline
	CCUninlined bool     // -G: declared inline, yet out of line
	Show        Show
	// NoParams, when not nil, says why there are no prototypes: the
	// parameters came neither from DWARF nor from a reference build.
	NoParams func() error
}

// List prints the functions of m that l picks, in m's order. Names that
// pick nothing are an error naming the closest functions (wrapping
// nothing: the model has no such name); ShowPrototypes or ShowLocations
// without parameters is l.NoParams's error.
func List(w io.Writer, m *code.Model, l *Listing) error {
	picked := l.pick(m)
	if len(l.Names) > 0 && len(picked) == 0 {
		return fmt.Errorf("%s: no function named %s%s", m.Path, l.Names[0], closestFuncs(m, l.Names[0]))
	}
	if l.Show == ShowJSON {
		return WriteJSON(w, picked)
	}
	if l.Show.protos() && l.NoParams != nil && len(picked) > 0 {
		return l.NoParams()
	}
	if l.Show.protos() {
		for _, line := range protoLines(picked, l.Show) {
			fmt.Fprintln(w, line)
		}
		return nil
	}
	for _, fn := range picked {
		writeFunc(w, fn, l.Show)
	}
	return nil
}

func (l *Listing) pick(m *code.Model) []*types.Func {
	var want map[*types.Func]bool
	if len(l.Names) > 0 {
		want = map[*types.Func]bool{}
		for _, n := range l.Names {
			for _, fn := range m.Lookup(n) {
				want[fn] = true
			}
		}
	}
	// Prototypes, parameter counts and types need debug info.
	needParams := m.DWARF != nil && (l.Show.protos() || l.Show == ShowNrParams || l.Class != "")
	var picked []*types.Func
	for _, fn := range m.Funcs() {
		switch {
		case want != nil && !want[fn],
			l.Externals && !fn.External,
			fn.SymbolOnly && needParams,
			l.Class != "" && !TakesPointerTo(fn, l.Class),
			(l.CCInlined || l.CCUninlined) && !HasInlineDecl(fn),
			l.CCInlined && (fn.DeclaredInline || len(fn.Inlined) == 0),
			l.CCUninlined && (!fn.DeclaredInline || fn.LowPC == 0):
			continue
		}
		picked = append(picked, fn)
	}
	return picked
}

func writeFunc(w io.Writer, fn *types.Func, show Show) {
	switch show {
	case ShowPrototypes, ShowLocations:
		fmt.Fprintln(w, show.line(fn))
	case ShowSizes:
		if fn.LowPC != 0 {
			fmt.Fprintf(w, "%s: %d\n", fn.Name, fn.Size)
		}
	case ShowNrParams:
		n := 0
		for _, p := range fn.Params {
			if !p.Result {
				n++
			}
		}
		fmt.Fprintf(w, "%s: %d\n", fn.Name, n)
	case ShowInline:
		if len(fn.Inlined) == 0 && len(fn.Clones) == 0 {
			return
		}
		fmt.Fprintf(w, "%s: %d inline expansions\n", fn.Name, len(fn.Inlined))
		for _, s := range fn.Inlined {
			fmt.Fprintf(w, "\tin %s at %s:%d:%d entry %#x", s.Caller, s.CallFile, s.CallLine, s.CallColumn, s.EntryPC)
			for _, r := range s.Ranges {
				fmt.Fprintf(w, " [%#x,%#x)", r[0], r[1])
			}
			fmt.Fprintln(w)
		}
		for _, c := range fn.Clones {
			fmt.Fprintf(w, "\tclone %s (%s) at %#x size %d\n", c.Symbol, c.Kind, c.Address, c.Size)
		}
	default:
		fmt.Fprintln(w, fn.Name)
	}
}

// protoLines are the lines in show of each of fns.
func protoLines(fns []*types.Func, show Show) []string {
	lines := make([]string, len(fns))
	for i := range fns {
		lines[i] = show.line(fns[i])
	}
	return lines
}

// protoLine is fn's line in gofunct --locations: its prototype and where each
// parameter is at entry.
func protoLine(fn *types.Func) string {
	tail := ""
	if l := Locations(fn); l != "" && fn.LowPC != 0 {
		tail = commentFor(fn.Lang, l)
	}
	return prototype(fn, tail)
}

// WriteInlineStats prints pfunct -I's lines: per function with
// expansions inlined into it, "name: expansions bytes".
func WriteInlineStats(w io.Writer, fns []*types.Func) {
	for _, s := range InlineStats(fns) {
		fmt.Fprintf(w, "%s: %d %d\n", s.Caller, s.Expansions, s.Bytes)
	}
}

// commentFor puts the parameter locations after a prototype as a comment
// of fn's language.
func commentFor(l types.Lang, s string) string {
	if l == types.LangC || l == types.LangCPlusPlus || l == types.LangUnknown {
		return " /* " + s + " */"
	}
	return " // " + s
}

// closestFuncs names up to three functions whose names are closest to
// name, for error messages.
func closestFuncs(m *code.Model, name string) string {
	near := types.Closest(m.Names(), name, 3)
	if len(near) == 0 {
		return ""
	}
	return " (closest: " + strings.Join(near, ", ") + ")"
}

type funcJSON struct {
	Name        string `json:"name"`
	LinkageName string `json:"linkage_name,omitempty"`
	Lang        string `json:"lang"`
	LowPC       uint64 `json:"low_pc"`
	Size        uint64 `json:"size"`
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	External    bool   `json:"external"`
	SymbolOnly  bool   `json:"symbol_only,omitempty"`
	// LostDIE is types.Func.LostDIE: its parameters and inline sites
	// are unknown (null), not none.
	LostDIE     uint64        `json:"lost_die,omitempty"`
	Prototype   string        `json:"prototype,omitempty"`
	Params      []paramJSON   `json:"params"`
	InlineSites []siteJSON    `json:"inline_sites"`
	Clones      []types.Clone `json:"clones"`
}

type paramJSON struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Result   bool   `json:"result,omitempty"`
	Location string `json:"location,omitempty"`
	// PC is where the location holds: the entry, or after the prologue.
	PC       uint64 `json:"pc,omitempty"`
	Readable bool   `json:"readable"`
}

type siteJSON struct {
	Caller     string      `json:"caller"`
	EntryPC    uint64      `json:"entry_pc"`
	Ranges     [][2]uint64 `json:"ranges"`
	CallFile   string      `json:"call_file"`
	CallLine   int         `json:"call_line"`
	CallColumn int         `json:"call_column"`
}

// WriteJSON prints fns as one indented JSON array: names, addresses,
// prototypes, parameters with their locations at entry, inline sites
// and clones.
func WriteJSON(w io.Writer, fns []*types.Func) error {
	out := make([]funcJSON, 0, len(fns))
	for _, fn := range fns {
		j := funcJSON{Name: fn.Name, LinkageName: fn.Linkage, Lang: fn.Lang.String(), LowPC: fn.LowPC, Size: fn.Size,
			File: fn.Decl.File, Line: fn.Decl.Line, External: fn.External, SymbolOnly: fn.SymbolOnly,
			Params: []paramJSON{}, InlineSites: []siteJSON{}, Clones: fn.Clones}
		if j.Clones == nil {
			j.Clones = []types.Clone{}
		}
		if fn.LostDIE != 0 {
			j.LostDIE, j.Params, j.InlineSites = fn.LostDIE, nil, nil
		}
		if len(fn.Params) > 0 || fn.Return != nil {
			j.Prototype = Prototype(fn)
		}
		for _, p := range fn.Params {
			pj := paramJSON{Name: p.Name, Type: types.Spell(p.Type, fn.Lang, types.SyntaxPahole), Result: p.Result}
			if !p.Result && fn.LowPC != 0 {
				pj.Location, pj.Readable, pj.PC = p.Loc.String(), p.Loc.Readable(), p.PC
			}
			j.Params = append(j.Params, pj)
		}
		for _, s := range fn.Inlined {
			j.InlineSites = append(j.InlineSites, siteJSON{Caller: s.Caller, EntryPC: s.EntryPC, Ranges: s.Ranges,
				CallFile: s.CallFile, CallLine: s.CallLine, CallColumn: s.CallColumn})
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// Pick returns the functions of m that l's filters pick (its Show aside),
// in m's order.
func Pick(m *code.Model, l *Listing) []*types.Func { return l.pick(m) }
