package types

import "testing"

// TestWalk: a Walk refuses a type already on its path and a path MaxDepth
// long, takes left types off, and lets a chain loop stop at a link met
// before.
func TestWalk(t *testing.T) {
	a, b := &Base{Name: "a"}, &Base{Name: "b"}
	var w Walk
	if !w.Enter(a) || !w.Enter(b) || w.Enter(a) || w.Depth() != 2 {
		t.Fatalf("Enter a, b, a: depth %d", w.Depth())
	}
	w.Leave()
	if !w.Enter(b) || !w.Enter(nil) || !w.Enter(nil) {
		t.Error("b again after leaving it, or nil, refused")
	}
	var deep Walk
	n := 0
	for deep.Enter(&Base{}) {
		n++
	}
	if n != MaxDepth {
		t.Errorf("entered %d distinct types, want MaxDepth (%d)", n, MaxDepth)
	}
	loop := &Typedef{Name: "a"}
	loop.Target = &Qualifier{Kind: Const, Target: loop}
	if r := Resolve(loop); r != loop {
		t.Errorf("Resolve(typedef cycle) = %v, want the typedef met again", r)
	}
	if _, err := Sizeof(loop); err != ErrCycle {
		t.Errorf("Sizeof(typedef cycle) = %v, want ErrCycle", err)
	}
}
