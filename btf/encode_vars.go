package btf

import (
	"cmp"
	"fmt"
	"slices"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/types"
)

// DataSection is an ELF section that holds variables (.data, .bss,
// .rodata, .noptrdata...): its name, virtual address and size.
type DataSection struct {
	Name string
	Addr uint64
	Size uint64
}

// datasecs are the DATASECs of the globals of opts: each global that lies
// whole in one of opts.Sections, with a type of known size, becomes a VAR
// (global linkage when it is external) at its offset in its section's
// DATASEC. A global that overlaps the one before it in its section, or
// repeats a name at an address already taken, is left out: the kernel
// wants a section's variables in order and apart.
//
// A C variable whose name BTF cannot hold (pahole's rule, validName) is an
// error, or, with EncodeForce, left out (with a warning on opts.Warn);
// other languages' names are made C identifiers by opts.Ident.
func (e *encoder) datasecs(opts *EncodeOptions) ([]*cbtf.Datasec, error) {
	secs := slices.Clone(opts.Sections)
	slices.SortFunc(secs, func(a, b DataSection) int { return cmp.Compare(a.Addr, b.Addr) })
	type placed struct {
		sec  int
		info cbtf.VarSecinfo
	}
	var all []placed
	seen := map[uint64]bool{}
	// global_var encodes every global; var only the per-CPU ones.
	feat := opts.features()
	for _, g := range opts.Vars {
		if g.Name == "" || g.Type == nil || seen[g.Addr] || !feat.Has(GlobalVar) && !feat.Has(Var) {
			continue
		}
		t := e.typ(g.Type)
		size, err := cbtf.Sizeof(t)
		if err != nil || size == 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(secs, g.Addr, func(s DataSection, a uint64) int {
			if s.Addr+s.Size <= a {
				return -1
			}
			if s.Addr > a {
				return 1
			}
			return 0
		})
		if i >= len(secs) || g.Addr < secs[i].Addr || g.Addr+uint64(size) > secs[i].Addr+secs[i].Size {
			continue
		}
		if !feat.Has(GlobalVar) && secs[i].Name != ".data..percpu" {
			continue
		}
		if g.Lang == types.LangC && !validName(g.Name) {
			const msg = "Found invalid variable name when encoding btf"
			if !feat.Has(EncodeForce) {
				return nil, fmt.Errorf("PAHOLE: Error: %s (sym: '%s'); use '--btf_encode_force' to ignore such symbols and force emit the btf", msg, g.Name)
			}
			if opts.Warn != nil {
				opts.Warn("PAHOLE: Warning: %s, ignored (sym: '%s').", msg, g.Name)
			}
			continue
		}
		seen[g.Addr] = true
		linkage := cbtf.StaticVar
		if g.External {
			linkage = cbtf.GlobalVar
		}
		v := &cbtf.Var{Name: e.name(g.Name), Type: t, Linkage: linkage, Tags: e.tags(g.Tags)}
		all = append(all, placed{i, cbtf.VarSecinfo{Type: v, Offset: uint32(g.Addr - secs[i].Addr), Size: uint32(size)}})
	}
	slices.SortStableFunc(all, func(a, b placed) int {
		return cmp.Or(cmp.Compare(a.sec, b.sec), cmp.Compare(a.info.Offset, b.info.Offset))
	})
	var out []*cbtf.Datasec
	var cur *cbtf.Datasec
	for k, p := range all {
		if k == 0 || all[k-1].sec != p.sec {
			cur = &cbtf.Datasec{Name: secs[p.sec].Name, Size: uint32(secs[p.sec].Size)}
			out = append(out, cur)
		} else if last := cur.Vars[len(cur.Vars)-1]; p.info.Offset < last.Offset+last.Size {
			continue
		}
		cur.Vars = append(cur.Vars, p.info)
	}
	return out, nil
}

// maxNameLen is the kernel's KSYM_NAME_LEN: a name BTF holds is shorter.
const maxNameLen = 512

// validName reports whether BTF can hold name as pahole's btf_name_valid
// checks it: a letter, '_' or '.' first, then letters, digits, '_' and
// '.', fewer than maxNameLen bytes.
func validName(name string) bool {
	if name == "" || len(name) >= maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9'
		if !ok {
			return false
		}
	}
	return true
}
