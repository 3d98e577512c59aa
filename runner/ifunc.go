package runner

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/binscope/binscope/attach"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/symtab"
)

// resolveIFuncs rewrites the definitions whose function is a GNU indirect
// function of target (strlen in the C library: its symbol is a resolver
// the dynamic loader calls once, to pick an implementation for the CPU)
// to the implementation processes on this machine run, with a note for each.
// The pick is read where the loader wrote it, in the file's own
// IRELATIVE slot for the function: in process pid, or else in a short
// helper process (/bin/true, started through k) that maps target. When
// no pick can be read, the error names the implementations the symbol
// table lists.
func resolveIFuncs(defs []string, target string, pid int, k Kernel) (_ []string, notes []string, _ error) {
	ef, err := elfx.Open(target)
	if err != nil {
		return defs, nil, nil // the resolver says what is wrong
	}
	defer ef.Close()
	dbg, _ := ef.FindDebugFile()
	if dbg != nil {
		defer dbg.Close()
	}
	syms := symtab.Read(ef, dbg)
	out := append([]string(nil), defs...)
	for i, text := range defs {
		d, err := probe.Parse(text)
		if err != nil || d.Func == "" || !strings.HasPrefix(text, d.Func) {
			continue
		}
		var resolver uint64
		for _, s := range syms.Named(d.Func) {
			if s.IFunc {
				resolver = s.Addr
			}
		}
		if resolver == 0 {
			continue
		}
		impl := ""
		if slot := iRelativeSlot(ef, resolver); slot != 0 {
			addr := uint64(0)
			if pid > 0 {
				addr = readSlot(pid, target, slot)
			} else {
				addr = helperSlot(target, slot, k)
			}
			if addr != 0 {
				for _, s := range syms.At(addr) {
					if impl == "" || strings.HasPrefix(impl, "__") && !strings.HasPrefix(s.Name, "__") {
						impl = s.Name
					}
				}
				// The implementation's most specific name: __strlen_evex
				// rather than an alias.
				for _, s := range syms.At(addr) {
					if strings.Contains(s.Name, d.Func+"_") {
						impl = s.Name
					}
				}
			}
		}
		if impl == "" {
			return nil, nil, fmt.Errorf("%s in %s is an indirect function (IFUNC): its symbol is the resolver that picks an implementation per CPU, not the code that runs; probe the implementation: %s",
				d.Func, filepath.Base(target), candidates(syms, d.Func))
		}
		out[i] = impl + text[len(d.Func):]
		notes = append(notes, fmt.Sprintf("%s in %s is an indirect function (IFUNC); on this CPU it runs %s: probing that", d.Func, filepath.Base(target), impl))
	}
	return out, notes, nil
}

// candidates lists the implementations of indirect function fn the
// symbol table names (__strlen_avx2, __strlen_evex, ...).
func candidates(syms *symtab.Table, fn string) string {
	seen := map[string]bool{}
	var names []string
	prefix := "__" + strings.TrimLeft(fn, "_") + "_"
	for _, s := range syms.Syms {
		if strings.HasPrefix(s.Name, prefix) && !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return "the symbol table names none (install the library's debug symbols, or name the implementation's address as FUNC+OFFSET)"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// iRelativeSlot is the address (in the file) of the slot an
// R_X86_64_IRELATIVE relocation fills with resolver's pick, or 0.
func iRelativeSlot(ef *elfx.File, resolver uint64) uint64 {
	if ef.Machine != elf.EM_X86_64 {
		return 0
	}
	for _, sec := range ef.Sections {
		if sec.Type != elf.SHT_RELA {
			continue
		}
		b, err := sec.Data()
		if err != nil {
			continue
		}
		for o := 0; o+24 <= len(b); o += 24 {
			off, info, addend := binary.LittleEndian.Uint64(b[o:]), binary.LittleEndian.Uint64(b[o+8:]), binary.LittleEndian.Uint64(b[o+16:])
			if elf.R_X86_64(info&0xffffffff) == elf.R_X86_64_IRELATIVE && addend == resolver {
				return off
			}
		}
	}
	return 0
}

// readSlot reads the 8-byte slot at file address slot of target as
// mapped in process pid, and returns it as an address in the file.
func readSlot(pid int, target string, slot uint64) uint64 {
	ms, err := stack.ProcMappings(pid)
	if err != nil {
		return 0
	}
	real, _ := filepath.EvalSymlinks(target)
	for _, m := range ms {
		if p, _ := filepath.EvalSymlinks(m.Path); p != real {
			continue
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
		if err != nil {
			return 0
		}
		defer f.Close()
		b := make([]byte, 8)
		if _, err := f.ReadAt(b, int64(slot+m.Bias)); err != nil {
			return 0
		}
		if v := binary.LittleEndian.Uint64(b); v > m.Bias {
			return v - m.Bias
		}
		return 0
	}
	return 0
}

// helperSlot runs /bin/true, when it maps target, up to its entry point
// (every relocation done) and reads the slot there.
func helperSlot(target string, slot uint64, k Kernel) uint64 {
	const helper = "/bin/true"
	real, _ := filepath.EvalSymlinks(target)
	maps := false
	for _, p := range stack.LoadedFiles(helper) {
		if r, _ := filepath.EvalSymlinks(p); r == real {
			maps = true
		}
	}
	if !maps {
		return 0
	}
	var addr uint64
	cmd := exec.Command(helper)
	started, err := k.Start(cmd, attach.GateHooks{Loaded: func(pid int) {
		// The last call, at the entry point, sees the relocated slot.
		addr = readSlot(pid, target, slot)
	}})
	if err != nil {
		return 0
	}
	started.Wait()
	return addr
}
