// Package usdt reads the statically defined probes (USDT, SystemTap's SDT)
// of an executable or a shared library: each NT_STAPSDT note of the
// .note.stapsdt section names a probe (provider and name), the address of
// the nop the compiler placed for it, its is-enabled semaphore, and its
// arguments as assembler operands ("-4@-20(%rbp)", "8@%rax", "-4@$5"),
// which Parse reads. The format is SystemTap's ("UserSpaceProbeImplementation",
// sys/sdt.h): a note's description holds three addresses (the probe's
// location, the link-time address of .stapsdt.base, the semaphore's, 0 for
// none) and three NUL-terminated strings (provider, name, arguments).
//
// When a prelinker moved the file after linking, the note's addresses are
// stale: .stapsdt.base's address then differs from the note's base, and
// the location and semaphore move by that difference (Read applies it).
package usdt

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/naming"
)

// ErrNoProbes is returned by Read for a file without a .note.stapsdt.
var ErrNoProbes = errors.New("no USDT probes (no .note.stapsdt section)")

// Probe is one USDT probe site. Addresses are virtual addresses of the
// file as linked, adjusted for prelink (see the package comment).
type Probe struct {
	Provider string
	Name     string
	// Addr is the probe's nop. A probe used at several places of the
	// source has one note, so one Probe, per place.
	Addr uint64
	// Semaphore is the address of the probe's is-enabled counter (a
	// uint16 the code tests before computing the arguments), 0 when the
	// probe has none.
	Semaphore uint64
	// Operands is the note's argument string as written; Args its
	// operands read (see ParseArg).
	Operands string
	Args     []Arg
}

// String is PROVIDER:NAME.
func (p *Probe) String() string { return p.Provider + ":" + p.Name }

// stapsdtType is the note type of SystemTap probe descriptors.
const stapsdtType = 3

// Read returns the probes of ef in note order, which is the order
// sys/sdt.h's asm statements were assembled. Errors: ErrNoProbes; a note
// that is cut short (file, section, offset).
func Read(ef *elfx.File) ([]Probe, error) {
	sec := ef.Section(".note.stapsdt")
	if sec == nil {
		return nil, fmt.Errorf("%s: %w", ef.Path, ErrNoProbes)
	}
	b, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: .note.stapsdt: %v", ef.Path, err)
	}
	var delta uint64
	base := ef.Section(".stapsdt.base")
	ptr := 8
	if ef.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	bo := ef.ByteOrder
	addr := func(b []byte) uint64 {
		if ptr == 4 {
			return uint64(bo.Uint32(b))
		}
		return bo.Uint64(b)
	}
	bad := func(off int, what string) error {
		return fmt.Errorf("%s: .note.stapsdt at offset %#x: %s: the file is damaged or not made by sys/sdt.h", ef.Path, off, what)
	}
	var out []Probe
	for off := 0; off+12 <= len(b); {
		namesz, descsz, typ := int(bo.Uint32(b[off:])), int(bo.Uint32(b[off+4:])), bo.Uint32(b[off+8:])
		nameAt := off + 12
		descAt := nameAt + align4(namesz)
		next := descAt + align4(descsz)
		if namesz < 0 || descsz < 0 || next > len(b) || next <= off {
			return nil, bad(off, "a note runs past the section")
		}
		name := string(bytes.TrimRight(b[nameAt:nameAt+namesz], "\x00"))
		if name != "stapsdt" || typ != stapsdtType {
			off = next
			continue
		}
		desc := b[descAt : descAt+descsz]
		if len(desc) < 3*ptr {
			return nil, bad(off, "a description shorter than its three addresses")
		}
		p := Probe{Addr: addr(desc), Semaphore: addr(desc[2*ptr:])}
		noteBase := addr(desc[ptr:])
		if base != nil && noteBase != 0 {
			delta = base.Addr - noteBase
			p.Addr += delta
			if p.Semaphore != 0 {
				p.Semaphore += delta
			}
		}
		strs := strings.SplitN(string(desc[3*ptr:]), "\x00", 4)
		if len(strs) < 3 {
			return nil, bad(off, "a description without provider, name and arguments")
		}
		p.Provider, p.Name, p.Operands = strs[0], strs[1], strs[2]
		if p.Provider == "" || p.Name == "" {
			return nil, bad(off, "a probe without a provider or a name")
		}
		p.Args = parseArgs(p.Operands, ef.Machine)
		out = append(out, p)
		off = next
	}
	return out, nil
}

func align4(n int) int { return (n + 3) &^ 3 }

// parseArgs reads the operands of one note, separated by spaces.
func parseArgs(s string, m elf.Machine) []Arg {
	var out []Arg
	for _, f := range strings.Fields(s) {
		out = append(out, ParseArg(f, m))
	}
	return out
}

// Named are the probes of ps whose provider and name match (each a
// naming.Pattern: "*" for any), in address order.
func Named(ps []Probe, provider, name string) []Probe {
	pp, np := naming.NewPattern(provider), naming.NewPattern(name)
	var out []Probe
	for _, p := range ps {
		if pp.Match(p.Provider) && np.Match(p.Name) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}
