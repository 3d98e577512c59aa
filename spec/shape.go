package spec

import (
	"encoding/json"
	"fmt"
	"slices"
)

// ShapeVersion is the format version of Shape.
const ShapeVersion = 1

// Shape is what a program generated from s (codegen's CO-RE bpf-c) relies
// on that does not move between builds of the same code: the probes'
// definitions, their sites in order with their kinds and functions, and
// each fetch with its registers, offsets and types, except the offsets a
// CO-RE program relocates (those whose Access names fields: 0 here). It
// leaves out the binary, its build-id, the sites' addresses and file
// offsets and the interfaces' itab addresses, which the loader takes from
// the target's own spec. Two specs of one shape read the same fields
// through the same registers at sites of the same kinds, so one CO-RE
// program serves both. Shape is JSON.
func Shape(s *Spec) ([]byte, error) {
	c := Spec{Version: ShapeVersion, Arch: s.Arch, Probes: slices.Clone(s.Probes)}
	for i := range c.Probes {
		p := &c.Probes[i]
		p.Sites = slices.Clone(p.Sites)
		for j := range p.Sites {
			st := &p.Sites[j]
			st.Addr, st.FileOffset, st.RefCtrOffset, st.Note = 0, 0, 0, ""
			st.Args = shapeFetches(st.Args)
			if st.Filter != nil {
				f := *st.Filter
				f.Operands = shapeFetches(f.Operands)
				st.Filter = &f
			}
		}
	}
	return json.Marshal(c)
}

func shapeFetches(fs []Fetch) []Fetch {
	fs = slices.Clone(fs)
	for k := range fs {
		f := &fs[k]
		f.Dynamic = nil
		f.Chains = slices.Clone(f.Chains)
		for n := range f.Chains {
			c := &f.Chains[n]
			c.Derefs = slices.Clone(c.Derefs)
			for d := range c.Derefs {
				if d < len(c.Access) && c.Access[d].Type != "" {
					c.Derefs[d] = 0
				}
			}
		}
	}
	return fs
}

// ParseShape reads a shape Shape wrote.
func ParseShape(shape []byte) (*Spec, error) {
	var want Spec
	if err := json.Unmarshal(shape, &want); err != nil {
		return nil, fmt.Errorf("not a probe shape: %v", err)
	}
	if want.Version != ShapeVersion {
		return nil, fmt.Errorf("probe shape version %d; this goprobe reads version %d", want.Version, ShapeVersion)
	}
	return &want, nil
}

// Defs are the probe definitions of a shape.
func (s *Spec) Defs() []string {
	var out []string
	for _, p := range s.Probes {
		out = append(out, p.Def)
	}
	return out
}

// SameShape reports why a program of the shape want (ParseShape) cannot
// serve the target's spec, or nil: the first probe, site or fetch that
// differs.
func SameShape(want, target *Spec) error {
	b, err := Shape(target)
	if err != nil {
		return err
	}
	var got Spec
	if err := json.Unmarshal(b, &got); err != nil {
		return err
	}
	if want.Arch != got.Arch {
		return fmt.Errorf("made for %s, the target is %s", want.Arch, got.Arch)
	}
	if len(want.Probes) != len(got.Probes) {
		return fmt.Errorf("%d probes, the target's definitions make %d", len(want.Probes), len(got.Probes))
	}
	for i, p := range want.Probes {
		q := got.Probes[i]
		if len(p.Sites) != len(q.Sites) {
			return fmt.Errorf("%s: %d sites, %d in the target", p.Def, len(p.Sites), len(q.Sites))
		}
		for j, s := range p.Sites {
			a, _ := json.Marshal(s)
			b, _ := json.Marshal(q.Sites[j])
			if string(a) != string(b) {
				return fmt.Errorf("%s: site %d (%s in %s) reads otherwise in the target: %s, not %s", p.Def, j, s.Kind, s.Function, b, a)
			}
		}
		p.Sites, q.Sites = nil, nil
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(q)
		if string(a) != string(b) {
			return fmt.Errorf("probe %d: %s in the target, not %s", i, b, a)
		}
	}
	return nil
}
