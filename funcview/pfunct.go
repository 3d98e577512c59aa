package funcview

import (
	"fmt"
	"io"
	"strconv"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/symtab"
	"github.com/binscope/binscope/types"
)

// WriteSymtabFile prints the functions of the symbol table section
// (.symtab or .dynsym) of the ELF file at path as pfunct --symtab does
// (see WriteSymtab).
func WriteSymtabFile(w io.Writer, path, section string) error {
	ef, err := elfx.Open(path)
	if err != nil {
		return err
	}
	defer ef.Close()
	entries, total, err := symtab.Section(ef, section)
	if err != nil {
		return err
	}
	return WriteSymtab(w, entries, total)
}

// WriteSymtab prints a symbol table's functions as pfunct --symtab does:
// "INDEX: NAME ADDR SIZE", the index padded to the digits of the table's
// size (total symbols), the name to the longest one (at most 32).
func WriteSymtab(w io.Writer, entries []symtab.Entry, total int) error {
	longest := 0
	for _, e := range entries {
		longest = max(longest, len(e.Name))
	}
	longest = min(longest, 32)
	width := len(strconv.Itoa(total))
	for _, e := range entries {
		addr := "0"
		if e.Addr != 0 {
			addr = fmt.Sprintf("%#x", e.Addr)
		}
		if _, err := fmt.Fprintf(w, "%*d: %-*s %s %5d\n", width, e.Index, longest, e.Name, addr, e.Size); err != nil {
			return err
		}
	}
	return nil
}

// WriteScopeCounts prints "name: N" for each function whose body declares
// variables outside nested blocks (pfunct -S) or, with labels, has goto
// labels (pfunct -g).
func WriteScopeCounts(w io.Writer, scopes []dwarf.Scope, labels bool) error {
	for _, s := range scopes {
		n := 0
		for _, l := range s.Locals {
			if !l.Nested {
				n++
			}
		}
		if labels {
			n = s.Labels
		}
		if n > 0 {
			if _, err := fmt.Fprintf(w, "%s: %d\n", s.Name, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteNameLengths prints "name: length" for each function (pfunct -N).
func WriteNameLengths(w io.Writer, fns []*types.Func) error {
	for _, fn := range fns {
		if _, err := fmt.Fprintf(w, "%s: %d\n", fn.Name, len(fn.Name)); err != nil {
			return err
		}
	}
	return nil
}

// WriteTotalInlineStats prints, for each function inlined somewhere, the
// bytes of all its expansions, their number and their average size, in
// pfunct -t's columns (without its count of compile units, which the model
// does not keep).
func WriteTotalInlineStats(w io.Writer, fns []*types.Func) error {
	if _, err := fmt.Fprintf(w, "%-32s %5s / %5s = %5s\n", "name", "totsz", "exp#", "avgsz"); err != nil {
		return err
	}
	for _, fn := range fns {
		if len(fn.Inlined) == 0 {
			continue
		}
		var total uint64
		for _, s := range fn.Inlined {
			total += Span(s.Ranges)
		}
		n := uint64(len(fn.Inlined))
		if _, err := fmt.Fprintf(w, "%-32s %5d   %5d   %5d\n", fn.Name, total, n, total/n); err != nil {
			return err
		}
	}
	return nil
}

// WriteVerbose prints each function as pfunct -V does: its prototype as a
// declaration, then, with locals, the variables its body declares between
// braces, and a comment with its size and the number of places it was
// inlined at. A function only a symbol names (types.Func.SymbolOnly) has
// no prototype to show: it prints as ? NAME(?), its comment saying why.
func WriteVerbose(w io.Writer, fns []*types.Func, scopes []dwarf.Scope) error {
	byName := map[string]*dwarf.Scope{}
	for i := range scopes {
		if _, ok := byName[scopes[i].Name]; !ok {
			byName[scopes[i].Name] = &scopes[i]
		}
	}
	for _, fn := range fns {
		line := Prototype(fn) + ";\n"
		if fn.SymbolOnly {
			// Neither its variables nor where it was inlined are known.
			why := "no debug info describes it, only its symbol"
			if fn.LostDIE != 0 {
				why = fmt.Sprintf("debug info lost with the unreadable DIE at %#x", fn.LostDIE)
			}
			line += fmt.Sprintf("/* size: %d, %s */\n\n", fn.Size, why)
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
			continue
		}
		if scopes != nil {
			line += "{\n"
			if s := byName[fn.Name]; s != nil {
				for _, l := range s.Locals {
					line += "\t" + types.Spell(l.Type, fn.Lang, types.SyntaxC) + " " + l.Name + ";\n"
				}
			}
			line += "}"
		}
		line += fmt.Sprintf("/* size: %d, inlined at: %d */\n\n", fn.Size, len(fn.Inlined))
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}
