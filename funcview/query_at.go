package funcview

import (
	"fmt"
	"io"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/types"
)

// Debug is what the line and variable views need of a file's debug info
// (a *dwarf.File has it): a function's line rows, the end of its
// prologue, and the variables live at an address.
type Debug interface {
	Lines(fn *types.Func) ([]types.Line, error)
	PrologueEnd(fn *types.Func) uint64
	VarsAt(pc uint64) ([]types.Var, error)
}

// FindFunc finds the out-of-line function called name (by any name the
// model of code knows), or says in its error which names are close, or
// that it exists only inlined or as clones.
func FindFunc(m *code.Model, name string) (*types.Func, error) {
	var inlineOnly *types.Func
	for _, fn := range m.Lookup(name) {
		if fn.LowPC != 0 {
			return fn, nil
		}
		inlineOnly = fn
	}
	if inlineOnly != nil {
		if len(inlineOnly.Clones) > 0 {
			return nil, fmt.Errorf("%s: %s exists only as clones (%s): list them with --inline -f '%s'", m.Path, name, inlineOnly.Clones[0].Symbol, name)
		}
		return nil, fmt.Errorf("%s: %s exists only inlined (%d sites): list them with --inline -f '%s'", m.Path, name, len(inlineOnly.Inlined), name)
	}
	return nil, fmt.Errorf("%s: no function named %s%s", m.Path, name, closestFuncs(m, name))
}

// WriteAddr answers gofunct -a: the function holding addr with the offset
// and the line there, then each inline expansion holding it, outermost
// first, with its call site, entry and the line there, then the
// expansions that begin at addr. No function there is an error wrapping
// types.ErrNotFound.
func WriteAddr(w io.Writer, m *code.Model, addr uint64) error {
	frames := m.At(addr)
	if len(frames) == 0 {
		return fmt.Errorf("%s: %w: no function covers address %#x", m.Path, types.ErrNotFound, addr)
	}
	outer := frames[len(frames)-1]
	fn := outer.Func
	off := fmt.Sprintf("+%#x", addr-fn.LowPC)
	if addr < fn.LowPC {
		off = fmt.Sprintf("-%#x", fn.LowPC-addr)
	}
	fmt.Fprintf(w, "%s%s (%#x) %s\n", fn.Name, off, addr, fileLine(outer.File, outer.Line))
	exp := m.Expansions(addr)
	for i := len(exp) - 1; i >= 0; i-- {
		s, fr := exp[i], frames[i]
		fmt.Fprintf(w, "%s inlined %s at %s:%d:%d entry %#x, at %s\n", strings.Repeat("  ", len(exp)-i), fr.Name,
			s.CallFile, s.CallLine, s.CallColumn, s.EntryPC, fileLine(fr.File, fr.Line))
	}
	for _, s := range m.Entering(addr) {
		fmt.Fprintf(w, "%s inlined %s at %s:%d:%d entry %#x begins here (no code of it at this address yet)\n",
			strings.Repeat("  ", len(exp)+1), s.Callee.Name, s.CallFile, s.CallLine, s.CallColumn, s.EntryPC)
	}
	return nil
}

func fileLine(file string, line int) string {
	if file == "" {
		return "??:?"
	}
	if line == 0 {
		return file + ":?"
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// WriteFuncLines answers gofunct -L FUNC: WriteLines for the function
// called name.
func WriteFuncLines(w io.Writer, m *code.Model, d Debug, name string) error {
	fn, err := FindFunc(m, name)
	if err != nil {
		return err
	}
	rows, err := d.Lines(fn)
	if err != nil {
		return err
	}
	return WriteLines(w, fn, rows, code.InlinedInto(m.Funcs(), fn.Name))
}
