package testutil

import (
	"fmt"
	"strings"

	"github.com/binscope/binscope/types"
)

// CheckTruth looks tt up by its exact name and compares it with every
// definition found; it returns the one that matches, or the problems of the
// closest one.
func CheckTruth(spec *types.Spec, tt TruthType, checkAlign bool) (types.Type, []string) {
	found := spec.Lookup(tt.Name)
	if len(found) == 0 {
		msg := fmt.Sprintf("not found among %d types", spec.Len())
		if near := spec.Closest(tt.Name, 3); len(near) > 0 {
			msg += " (closest: " + strings.Join(near, ", ") + ")"
		}
		return nil, []string{msg}
	}
	var best []string
	for i, f := range found {
		r := types.Resolve(f)
		p := compare(r, tt, checkAlign)
		if len(p) == 0 {
			return r, nil
		}
		if i == 0 || len(p) < len(best) {
			best = p
		}
	}
	if len(found) > 1 {
		best = append(best, fmt.Sprintf("(%d definitions with this name, none matches)", len(found)))
	}
	return nil, best
}

// flatMember is a member with its offset from the outermost type, found
// through anonymous struct and union members as C names them.
type flatMember struct {
	m      *types.Member
	offset types.Bits
	used   bool
}

func flatten(s *types.Struct, base types.Bits, w *types.Walk, out *[]*flatMember) {
	if !w.Enter(s) {
		return
	}
	defer w.Leave()
	for i := range s.Members {
		m := &s.Members[i]
		if m.Name == "" && !m.Embedded {
			if in, ok := types.Resolve(m.Type).(*types.Struct); ok && in.Name == "" {
				flatten(in, base+m.Offset, w, out)
				continue
			}
		}
		*out = append(*out, &flatMember{m: m, offset: base + m.Offset})
	}
}

func compare(got types.Type, tt TruthType, checkAlign bool) []string {
	var p []string
	size, err := types.Sizeof(got)
	if err != nil {
		p = append(p, fmt.Sprintf("size: %v", err))
	} else if size != tt.Size {
		p = append(p, fmt.Sprintf("size %d, want %d", size, tt.Size))
	}
	if a := types.Alignof(got); checkAlign && tt.Align > 0 && a != tt.Align {
		p = append(p, fmt.Sprintf("align %d, want %d", a, tt.Align))
	}
	if len(tt.Members) == 0 {
		return p
	}
	s, ok := got.(*types.Struct)
	if !ok {
		return append(p, fmt.Sprintf("is %T, want a struct with %d members", got, len(tt.Members)))
	}
	var flat []*flatMember
	var w types.Walk
	flatten(s, 0, &w, &flat)
	for _, tm := range tt.Members {
		fm, off := lookupMember(s, flat, tm.Name)
		if fm == nil {
			p = append(p, fmt.Sprintf("member %s missing", tm.Name))
			continue
		}
		msize, err := types.Sizeof(fm.Type)
		if err != nil {
			p = append(p, fmt.Sprintf("member %s: size: %v", tm.Name, err))
		} else if msize != tm.Size {
			p = append(p, fmt.Sprintf("member %s: size %d, want %d", tm.Name, msize, tm.Size))
		}
		if tm.BitOffset != nil {
			if off != types.Bits(*tm.BitOffset) || fm.BitSize != types.Bits(tm.BitSize) {
				p = append(p, fmt.Sprintf("member %s: bits %d+%d, want %d+%d", tm.Name, off, fm.BitSize, *tm.BitOffset, tm.BitSize))
			}
			continue
		}
		if off%8 != 0 || off.Bytes() != tm.Offset || fm.BitSize != 0 {
			p = append(p, fmt.Sprintf("member %s: offset %d bits (bit size %d), want byte %d", tm.Name, off, fm.BitSize, tm.Offset))
		}
	}
	for _, f := range flat {
		if !f.used && !f.m.Artificial {
			p = append(p, fmt.Sprintf("member %q at bit %d is not in the truth", f.m.Name, f.offset))
		}
	}
	return p
}

// lookupMember finds a truth member among the flattened members: by name
// (the first not yet used, for Go's repeated "_"), by the type name of a
// base class or embedded field, or as "Variant.field" in a Rust enum's
// variant part. It returns the member and its bit offset from the type.
func lookupMember(s *types.Struct, flat []*flatMember, name string) (*types.Member, types.Bits) {
	for _, f := range flat {
		if !f.used && f.m.Name == name {
			f.used = true
			return f.m, f.offset
		}
	}
	for _, f := range flat {
		if !f.used && f.m.Embedded && (f.m.Type.TypeName() == name || types.Resolve(f.m.Type).TypeName() == name) {
			f.used = true
			return f.m, f.offset
		}
	}
	variant, field, ok := strings.Cut(name, ".")
	if !ok || s.Variants == nil {
		return nil, 0
	}
	for i := range s.Variants.Variants {
		vm := &s.Variants.Variants[i].Member
		if vm.Name != variant {
			continue
		}
		vs, ok := types.Resolve(vm.Type).(*types.Struct)
		if !ok {
			return nil, 0
		}
		for j := range vs.Members {
			if vs.Members[j].Name == field {
				return &vs.Members[j], vm.Offset + vs.Members[j].Offset
			}
		}
	}
	return nil, 0
}
