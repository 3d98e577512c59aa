package types

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The graphs C allows pass: a struct pointing to itself, directly and
// through a function pointer whose parameters take it by pointer or by
// value, and an anonymous struct behind a pointer.
func TestCheckAccepts(t *testing.T) {
	i := &Base{Name: "int", ByteSize: 4}
	node := &Struct{Name: "node", ByteSize: 24}
	cb := &FuncProto{Return: i, Params: []FuncParam{
		{Type: &Pointer{ByteSize: 8, Target: &Qualifier{Kind: Const, Target: node}}},
		{Type: node},
	}}
	anon := &Struct{ByteSize: 4, Members: []Member{{Name: "x", Type: i}}}
	node.Members = []Member{
		{Name: "next", Type: &Pointer{ByteSize: 8, Target: node}},
		{Name: "cb", Type: &Pointer{ByteSize: 8, Target: cb}, Offset: 64},
		{Name: "in", Type: &Pointer{ByteSize: 8, Target: anon}, Offset: 128},
	}
	var c Checker
	for _, ty := range []Type{node, cb, anon, &Typedef{Name: "node_t", Target: node}} {
		if err := c.Check(ty); err != nil {
			t.Errorf("%s: %v", TypeString(ty), err)
		}
	}
}

// The graphs no compiler emits are rejected in time linear in their size:
// a struct holding itself (a walk would recurse until MaxDepth at every
// member), function types whose parameters point back to them without a
// name, and structs that each hold the next one twice, 64 levels deep
// (2^64 members met by a walk that does not remember).
func TestCheckRejects(t *testing.T) {
	i := &Base{Name: "int", ByteSize: 4}
	self := &Struct{Name: "self", ByteSize: 8}
	self.Members = []Member{{Name: "a", Type: self}, {Name: "b", Type: &Array{Elem: &Typedef{Name: "self_t", Target: self}, Count: 2}}}

	fp := &FuncProto{Return: i}
	fp.Params = []FuncParam{{Type: &Pointer{ByteSize: 8, Target: fp}}, {Type: &Pointer{ByteSize: 8, Target: fp}}}

	var deep Type = i
	for range 64 {
		deep = &Struct{Name: "level", ByteSize: 8, Members: []Member{{Name: "l", Type: deep}, {Name: "r", Type: deep}}}
	}

	loop := &Typedef{Name: "a"}
	loop.Target = &Qualifier{Kind: Const, Target: loop}

	for _, c := range []struct {
		ty   Type
		want string
	}{
		{self, "struct self contains itself"},
		{fp, "a function type contains itself"},
		{deep, "struct level has parts that expand to more than"},
		{loop, "a chain of more than"},
	} {
		var ch Checker
		err := ch.Check(c.ty)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check = %v, want ErrMalformed: %s", err, c.want)
		}
	}
}

// OneLine escapes the line breaks a name from corrupt input brings into an
// error, and keeps what the error wraps.
func TestOneLine(t *testing.T) {
	err := OneLine(fmt.Errorf("f: struct %s\r: %w", "a\nb", ErrNotFound))
	if strings.ContainsAny(err.Error(), "\n\r") || !strings.Contains(err.Error(), `a\nb\r`) || !errors.Is(err, ErrNotFound) {
		t.Errorf("OneLine = %q (wraps ErrNotFound: %v)", err, errors.Is(err, ErrNotFound))
	}
	if OneLine(nil) != nil {
		t.Error("OneLine(nil) != nil")
	}
}
