package probe

// The loops of an instance's control flow, for placement: the caller's
// loops around an inline expansion say where one call ends and the next
// begins. A call made in a loop runs once per iteration (unless the
// compiler unrolled the loop: see split), so two passes through the
// expansion's code that no back edge of a caller's loop separates belong to
// one call; code of the body hoisted out of the loop runs once for many.

// dom is the dominator tree of a flow, over instruction indexes.
type dom struct {
	idx  map[uint64]int
	addr []uint64
	idom []int // -1: unreachable from the entry (or the entry itself)
	rpo  []int // reverse post-order number; -1 unreachable
	// loops by header: the instructions of each natural loop (its
	// header's back edges merged), and the back edges' sources.
	loops map[int]*loop
}

type loop struct {
	header  int
	body    map[int]bool
	latches []int
}

// dominators computes fl's dominator tree and natural loops once (Cooper,
// Harvey and Kennedy's iterative algorithm, on instructions).
func (fl *flow) dominators() *dom {
	if fl.dom != nil {
		return fl.dom
	}
	d := &dom{idx: make(map[uint64]int, len(fl.addrs)), addr: fl.addrs}
	for i, a := range fl.addrs {
		d.idx[a] = i
	}
	n := len(fl.addrs)
	d.idom, d.rpo = make([]int, n), make([]int, n)
	for i := range d.idom {
		d.idom[i], d.rpo[i] = -1, -1
	}
	root, ok := d.idx[fl.entry]
	if !ok {
		fl.dom = d
		return d
	}
	order := d.reversePostOrder(fl, root)
	d.immediate(fl, order, root)
	d.naturalLoops(fl, order)
	fl.dom = d
	return d
}

// reversePostOrder numbers the instructions the entry (root) reaches in
// reverse post-order (d.rpo) and returns them in that order. The walk
// keeps an explicit stack: flows have thousands of instructions.
func (d *dom) reversePostOrder(fl *flow, root int) []int {
	var post []int
	seen := make([]bool, len(d.addr))
	type frame struct{ node, next int }
	stack := []frame{{root, 0}}
	seen[root] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		succ := fl.succ[d.addr[top.node]]
		if top.next < len(succ) {
			s := d.idx[succ[top.next]]
			top.next++
			if !seen[s] {
				seen[s] = true
				stack = append(stack, frame{s, 0})
			}
			continue
		}
		post = append(post, top.node)
		stack = stack[:len(stack)-1]
	}
	order := make([]int, 0, len(post))
	for i := len(post) - 1; i >= 0; i-- {
		d.rpo[post[i]] = len(order)
		order = append(order, post[i])
	}
	return order
}

// immediate computes each reached instruction's immediate dominator
// (d.idom) by iterating to the fixed point over the reverse post-order.
func (d *dom) immediate(fl *flow, order []int, root int) {
	d.idom[root] = root
	intersect := func(a, b int) int {
		for a != b {
			for d.rpo[a] > d.rpo[b] {
				a = d.idom[a]
			}
			for d.rpo[b] > d.rpo[a] {
				b = d.idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for _, b := range order[1:] {
			nd := -1
			for _, pa := range fl.pred[d.addr[b]] {
				p := d.idx[pa]
				if d.rpo[p] < 0 || d.idom[p] < 0 {
					continue
				}
				if nd < 0 {
					nd = p
				} else {
					nd = intersect(p, nd)
				}
			}
			if nd >= 0 && d.idom[b] != nd {
				d.idom[b], changed = nd, true
			}
		}
	}
	d.idom[root] = -1
}

// naturalLoops finds the natural loops (d.loops): each edge to an
// instruction that dominates its source is a back edge, and the loop of
// its header holds what reaches the source backwards without passing the
// header.
func (d *dom) naturalLoops(fl *flow, order []int) {
	d.loops = map[int]*loop{}
	for _, u := range order {
		for _, sa := range fl.succ[d.addr[u]] {
			h := d.idx[sa]
			if !d.dominates(h, u) {
				continue
			}
			l := d.loops[h]
			if l == nil {
				l = &loop{header: h, body: map[int]bool{h: true}}
				d.loops[h] = l
			}
			l.latches = append(l.latches, u)
			work := []int{u}
			for len(work) > 0 {
				x := work[len(work)-1]
				work = work[:len(work)-1]
				if l.body[x] {
					continue
				}
				l.body[x] = true
				for _, pa := range fl.pred[d.addr[x]] {
					if p := d.idx[pa]; d.rpo[p] >= 0 && !l.body[p] {
						work = append(work, p)
					}
				}
			}
		}
	}
}

// dominates reports whether every path from the entry to b passes a (a
// node dominates itself); false for nodes the entry does not reach.
func (d *dom) dominates(a, b int) bool {
	if d.rpo[a] < 0 || d.rpo[b] < 0 {
		return false
	}
	for x := b; x >= 0; x = d.idom[x] {
		if x == a {
			return true
		}
	}
	return false
}

// callerLoops are the loops holding instruction x that are not the
// expansion's own (see ownLoop): loops of the code around an expansion,
// not of its body.
func (fl *flow) callerLoops(x uint64, rs [][2]uint64) []*loop {
	d := fl.dominators()
	i, ok := d.idx[x]
	if !ok {
		return nil
	}
	var out []*loop
	for _, l := range d.loops {
		if l.body[i] && !fl.ownLoop(l, rs) {
			out = append(out, l)
		}
	}
	return out
}

// ownLoop reports whether l is a loop of the expansion's own code: its
// back edges come from inside rs, and every iteration stays in rs but for
// code that does nothing a call is seen by (see effect). An iteration that
// runs the caller's own effects (its records, its other calls) is the
// caller's: LLVM may give the latch of a loop of calls to the last copy
// of the body, rust-O3 seed 3058 (fn11's two unrolled fn12 calls in
// fn03's loop, whose back edges are in the second copy's code).
func (fl *flow) ownLoop(l *loop, rs [][2]uint64) bool {
	d := fl.dominators()
	for _, u := range l.latches {
		if !holds(rs, d.addr[u]) {
			return false
		}
	}
	for i := range l.body {
		if a := d.addr[i]; !holds(rs, a) && effect(fl.op[a]) {
			return false
		}
	}
	return true
}

// backEdge reports whether the edge from u to v goes back to the header
// of one of loops.
func (d *dom) backEdge(u, v uint64, loops []*loop) bool {
	for _, l := range loops {
		if d.addr[l.header] == v && l.body[d.idx[u]] {
			return true
		}
	}
	return false
}

// search reports whether control can go from x, along the edges follow
// takes (from, to), to an instruction found is true of (a path of at
// least one edge).
func (fl *flow) search(x uint64, follow func(from, to uint64) bool, found func(uint64) bool) bool {
	seen := map[uint64]bool{}
	work := []uint64{x}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		for _, s := range fl.succ[n] {
			if seen[s] || !follow(n, s) {
				continue
			}
			if found(s) {
				return true
			}
			seen[s] = true
			work = append(work, s)
		}
	}
	return false
}

// reachFirst reports whether control can reach e from start without
// passing any of avoid (start itself is not avoided).
func (fl *flow) reachFirst(start, e uint64, avoid map[uint64]bool) bool {
	return start == e || fl.search(start, func(_, to uint64) bool { return to == e || !avoid[to] }, func(y uint64) bool { return y == e })
}

// postDominatesIn reports whether every path from a reaches b before it
// leaves the instance or goes back to the head of one of loops (the
// caller's loops holding a: the next iteration makes the next call).
func (fl *flow) postDominatesIn(b, a uint64, loops []*loop) bool {
	return a != b && fl.everyPathHits(a, map[uint64]bool{b: true}, loops)
}

// reachIn reports whether control can go from x to y (a path of at least
// one edge) without going back to the head of one of loops.
func (fl *flow) reachIn(x, y uint64, loops []*loop) bool {
	d := fl.dominators()
	return fl.search(x, func(from, to uint64) bool { return !d.backEdge(from, to, loops) }, func(z uint64) bool { return z == y })
}

// bodyLoop reports whether loop l, its header in rs, is a loop of the
// body though code outside rs closes it: it is entered from code of rs
// only, and its instructions outside rs (GCC gives a latch of the body's
// loop, mov $1,%r15d; jmp head, to the caller's line: gcc -O3 seeds
// 2325, 3014, 3118) neither branch nor have an effect, so that the body's
// code makes every decision of the loop. A caller's loop is entered from
// the caller's code, or tests the caller's condition outside rs (GCC's
// copy of a caller's loop unswitched on a guard, entered from the body:
// gcc-O2 seed 1080).
func (fl *flow) bodyLoop(l *loop, rs [][2]uint64) bool {
	d := fl.dominators()
	head := d.addr[l.header]
	if !holds(rs, head) {
		return false
	}
	for _, p := range fl.pred[head] {
		if !l.body[d.idx[p]] && !holds(rs, p) {
			return false
		}
	}
	for i := range l.body {
		a := d.addr[i]
		if !holds(rs, a) && (len(fl.succ[a]) != 1 || !l.body[d.idx[fl.succ[a][0]]] || effect(fl.op[a])) {
			return false
		}
	}
	return true
}

// notBodyLoops are the entries raw of an expansion (code rs) but the
// heads of loops of the body (see bodyLoop), which code outside rs enters
// only by their back edges: GCC gives a latch of the body's loop to no
// scope, and the loop's next iteration is no call.
func (fl *flow) notBodyLoops(raw []uint64, rs [][2]uint64) []uint64 {
	d := fl.dominators()
	var out []uint64
	for _, e := range raw {
		if l := d.loops[d.idx[e]]; l == nil || e == fl.entry || !fl.bodyLoop(l, rs) {
			out = append(out, e)
		}
	}
	return out
}
