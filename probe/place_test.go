package probe

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// linear makes a flow of one-byte instructions at addrs with the given
// extra edges (each instruction also falls through to the next unless it
// is in stops).
func linear(addrs []uint64, edges map[uint64][]uint64, stops map[uint64]bool) *flow {
	fl := &flow{succ: map[uint64][]uint64{}, pred: map[uint64][]uint64{}, op: map[uint64]x86asm.Inst{}, entry: addrs[0]}
	fl.addrs = addrs
	link := func(a, b uint64) {
		fl.succ[a] = append(fl.succ[a], b)
		fl.pred[b] = append(fl.pred[b], a)
	}
	for i, a := range addrs {
		fl.op[a] = x86asm.Inst{Op: x86asm.MOV, Len: 1, Args: x86asm.Args{x86asm.RAX}}
		if i+1 < len(addrs) && !stops[a] {
			link(a, addrs[i+1])
		}
		for _, b := range edges[a] {
			link(a, b)
		}
	}
	return fl
}

// TestStartsHoisted: an expansion entered at 3 (a register load) inside
// the caller's loop (3..4 -> 1) and again at 6 after it, which every path
// reaches: one call, counted at 6; entered at 2 and then 6 with no loop
// between: one call, counted at 2.
func TestStartsHoisted(t *testing.T) {
	addrs := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8}
	loop := linear(addrs, map[uint64][]uint64{4: {1}}, map[uint64]bool{8: true})
	rs := [][2]uint64{{3, 4}, {6, 8}}
	es := loop.entries(rs, nil)
	if len(es) != 2 || es[0] != 3 || es[1] != 6 {
		t.Fatalf("entries %v, want [3 6]", es)
	}
	if got := loop.callStarts(es, rs); len(got) != 1 || got[0] != 6 {
		t.Errorf("starts %v, want [6]", got)
	}
	straight := linear(addrs, nil, map[uint64]bool{8: true})
	rs = [][2]uint64{{2, 4}, {6, 8}}
	es = straight.entries(rs, nil)
	if got := straight.callStarts(es, rs); len(got) != 1 || got[0] != 2 {
		t.Errorf("straight: starts %v, want [2]", got)
	}
	// Line-0 code between the pieces (4, 5) is no way in.
	es = straight.entries(rs, map[uint64]bool{4: true, 5: true})
	if len(es) != 1 || es[0] != 2 {
		t.Errorf("neutral gap: entries %v, want [2]", es)
	}
}

// TestCopies: a body of six instructions laid twice end to end is two
// calls; a body without a repeat is one.
func TestCopies(t *testing.T) {
	var addrs []uint64
	for a := uint64(0); a < 14; a++ {
		addrs = append(addrs, a)
	}
	fl := linear(addrs, nil, nil)
	own := func(a uint64) bool { return a < 12 }
	if got := fl.copies(0, own); len(got) != 1 || got[0] != 6 {
		t.Errorf("copies %v, want [6]", got)
	}
	in := fl.op[3]
	in.Op = x86asm.ADD
	fl.op[3] = in
	if got := fl.copies(0, own); len(got) != 0 {
		t.Errorf("copies %v, want none", got)
	}
}

// TestApartCopies: GCC's guard-true path of an unswitched loop, entered
// apart from the entry_pc's path at 10, a row of the declaration line at
// 10, 20 and 30, each copy making a call: 20 and 30 are further starts.
// The row at 5, on the entry_pc's path, is not; nor the row at 40, which
// control also reaches from 0 past 10; nor any where 10 is no row.
func TestApartCopies(t *testing.T) {
	var addrs []uint64
	for a := uint64(0); a < 50; a++ {
		addrs = append(addrs, a)
	}
	fl := linear(addrs, map[uint64][]uint64{0: {10, 40}}, map[uint64]bool{9: true, 49: true})
	for _, a := range []uint64{3, 12, 22, 32, 42} {
		fl.op[a] = x86asm.Inst{Op: x86asm.CALL, Len: 1}
	}
	rs := [][2]uint64{{1, 50}}
	decl := func() map[uint64]bool { return map[uint64]bool{5: true, 10: true, 20: true, 30: true, 40: true} }
	got := fl.apartCopies(decl(), []uint64{10}, []uint64{1, 10}, rs)
	if len(got) != 2 || got[0] != 20 || got[1] != 30 {
		t.Errorf("copies %v, want [20 30]", got)
	}
	d := decl()
	delete(d, 10)
	if got := fl.apartCopies(d, []uint64{10}, []uint64{1, 10}, rs); len(got) != 0 {
		t.Errorf("no row at the entry: copies %v, want none", got)
	}
}
