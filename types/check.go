package types

import (
	"errors"
	"fmt"
)

// MaxNodes bounds the number of types one walk over a type's parts may meet:
// members, array elements and typedef targets by value, parameters, and
// pointers to types without a name. The largest of the running kernel's
// BTF (bpf_ctx_convert, which holds every context type) meets 5,202; of
// cmd/go, 565; of libc, 410.
const MaxNodes = 1 << 16

// ErrMalformed marks a type graph that no compiler emits and that walks over
// the model could not finish: a type inside itself, or one whose parts, met
// each time they are used, exceed MaxNodes. Loaders reject such input.
var ErrMalformed = errors.New("malformed type graph")

// A Checker checks types as a loader hands them out (see Check). It
// remembers what it has checked, so checking every type of a file costs one
// visit of each composite type and function type.
type Checker struct {
	cost map[Type]int // composites and function types: their node count, or -1 while being counted
}

// Check returns an error wrapping ErrMalformed when t contains itself (by
// value, or through a pointer to a type without a name: no source language
// can spell either) or when a walk over its parts meets more than MaxNodes
// types, which only a graph sharing parts level after level does. Pointers
// to named types end a walk, so a struct that points to itself is fine.
func (c *Checker) Check(t Type) error {
	if c.cost == nil {
		c.cost = make(map[Type]int)
	}
	n, err := c.count(t, false)
	if err != nil {
		return err
	}
	if n > MaxNodes {
		return fmt.Errorf("%w: %s has parts that expand to more than %d types", ErrMalformed, describe(t), MaxNodes)
	}
	return nil
}

// count returns the number of types a walk over t's parts meets, at most
// MaxNodes+1. Behind a pointer, and in a function's signature, a named type
// ends the walk: it is referred to, not contained.
func (c *Checker) count(t Type, ref bool) (int, error) {
	// Chains of typedefs, qualifiers, arrays and pointers do not branch:
	// follow them in a loop, and remember only the types that branch.
	for n := 1; n <= MaxNodes; n++ {
		if ref && t != nil && t.TypeName() != "" {
			return n, nil
		}
		switch v := t.(type) {
		case *Typedef:
			t = v.Target
			continue
		case *Qualifier:
			t = v.Target
			continue
		case *Array:
			t = v.Elem
			continue
		case *Pointer:
			t, ref = v.Target, true
			continue
		case *Struct, *FuncProto:
			m, err := c.branch(t)
			return min(n+m, MaxNodes+1), err
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: a chain of more than %d typedefs, qualifiers, arrays and pointers (a cycle?)", ErrMalformed, MaxNodes)
}

// branch counts the parts of a struct or a function type, once.
func (c *Checker) branch(t Type) (int, error) {
	switch n := c.cost[t]; {
	case n > 0:
		return n - 1, nil
	case n < 0:
		return 0, fmt.Errorf("%w: %s contains itself", ErrMalformed, describe(t))
	}
	c.cost[t] = -1
	total := 0
	add := func(p Type, ref bool) error {
		m, err := c.count(p, ref)
		total = min(total+m, MaxNodes+1)
		return err
	}
	var err error
	switch v := t.(type) {
	case *Struct:
		for i := 0; i < len(v.Members) && err == nil; i++ {
			err = add(v.Members[i].Type, false)
		}
		if vp := v.Variants; vp != nil && err == nil {
			if vp.Tag != nil {
				err = add(vp.Tag.Type, false)
			}
			for i := 0; i < len(vp.Variants) && err == nil; i++ {
				err = add(vp.Variants[i].Member.Type, false)
			}
		}
	case *FuncProto:
		err = add(v.Return, true)
		for i := 0; i < len(v.Params) && err == nil; i++ {
			err = add(v.Params[i].Type, true)
		}
	}
	if err != nil {
		delete(c.cost, t)
		return 0, err
	}
	c.cost[t] = total + 1
	return total, nil
}

// describe names t for an error: "struct foo", or its kind when it has no
// name.
func describe(t Type) string {
	switch v := t.(type) {
	case *Struct:
		if v.Name == "" {
			return "an anonymous " + v.Kind.String()
		}
		return v.Kind.String() + " " + v.Name
	case *FuncProto:
		if v.Name == "" {
			return "a function type"
		}
		return "function type " + v.Name
	case nil:
		return "void"
	case *Qualifier:
		return "a " + v.Kind.String()
	}
	if n := t.TypeName(); n != "" {
		return n
	}
	return fmt.Sprintf("a %T", t)
}
