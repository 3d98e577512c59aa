package dwarf

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// dumpLoc is one location expression as llvm-dwarfdump prints it: a
// variable's or parameter's DW_AT_location, or one entry of its location
// list, with the frame base of the function around it.
type dumpLoc struct {
	text, frameBase string
}

var (
	dieHeader = regexp.MustCompile(`^0x([0-9a-f]+):(\s+)(DW_TAG_\w+|NULL)`)
	listEntry = regexp.MustCompile(`^\s*\[0x([0-9a-f]+), 0x([0-9a-f]+)\): (.*?)\)?$`)
)

// llvmLocations runs llvm-dwarfdump on file and returns the locations of
// variables and parameters, keyed by DIE offset and, for a location list
// entry, its address range ("off" or "off lo hi").
func llvmLocations(t *testing.T, file string) map[string]dumpLoc {
	t.Helper()
	out, err := exec.Command("llvm-dwarfdump", "--debug-info", file).Output()
	if err != nil {
		testutil.Skipf(t, "llvm-dwarfdump: %v", err)
	}
	locs := map[string]dumpLoc{}
	var stack []dumpLevel
	var die, tag string
	inList := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := dieHeader.FindStringSubmatch(line); m != nil {
			die, tag, inList = m[1], m[3], false
			indent := len(m[2])
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			fb := ""
			if len(stack) > 0 {
				fb = stack[len(stack)-1].frameBase
			}
			stack = append(stack, dumpLevel{indent, fb})
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "DW_AT_frame_base\t(") && len(stack) > 0:
			stack[len(stack)-1].frameBase = strings.TrimSuffix(strings.TrimPrefix(trimmed, "DW_AT_frame_base\t("), ")")
		case tag != "DW_TAG_variable" && tag != "DW_TAG_formal_parameter":
		case strings.HasPrefix(trimmed, "DW_AT_location\t("):
			v := strings.TrimPrefix(trimmed, "DW_AT_location\t(")
			if strings.HasSuffix(v, ":") || strings.HasPrefix(v, "indexed (") {
				inList = true
				continue
			}
			locs[die] = dumpLoc{strings.TrimSuffix(v, ")"), frameBaseOf(stack)}
		case inList:
			m := listEntry.FindStringSubmatch(line)
			if m == nil {
				inList = false
				continue
			}
			lo, _ := strconv.ParseUint(m[1], 16, 64)
			hi, _ := strconv.ParseUint(m[2], 16, 64)
			locs[listKey(locs, fmt.Sprintf("%s %x %x", die, lo, hi))] = dumpLoc{m[3], frameBaseOf(stack)}
			inList = !strings.HasSuffix(line, ")")
		}
	}
	return locs
}

// listKey keys a location list entry by its DIE, its range and how many
// entries of the list before it have the same range (GCC's location views
// give several entries one address): "off lo hi #n".
func listKey[V any](m map[string]V, base string) string {
	for n := 0; ; n++ {
		k := fmt.Sprintf("%s #%d", base, n)
		if _, ok := m[k]; !ok {
			return k
		}
	}
}

// dumpLevel is one DIE of the dump's nesting: its indentation and the
// frame base in effect (its own DW_AT_frame_base, or its parent's).
type dumpLevel struct {
	indent    int
	frameBase string
}

func frameBaseOf(stack []dumpLevel) string {
	if len(stack) == 0 {
		return ""
	}
	return stack[len(stack)-1].frameBase
}

// machine is what both evaluators read: registers, their values at the
// function's entry, the CFA, and memory (a function of the address).
type machine struct {
	regs, entry map[string]uint64
	cfa         uint64
}

func (m *machine) reg(name string) uint64      { return drawn(m.regs, name) }
func (m *machine) entryReg(name string) uint64 { return drawn(m.entry, name) }

// drawn is the random value m holds for name, drawn the first time.
func drawn(m map[string]uint64, name string) uint64 {
	if v, ok := m[name]; ok {
		return v
	}
	v := rand.Uint64()
	m[name] = v
	return v
}

func (m *machine) mem(addr uint64, size int64) uint64 {
	v := addr*0x9e3779b97f4a7c15 ^ addr>>29
	if size < 8 {
		v &= 1<<(8*size) - 1
	}
	return v
}

// result is what a piece evaluates to: a value, or the address of one.
type result struct {
	addr bool
	v    uint64
	size int64
}

// evalOps runs the stack machine of types.Op.
func (m *machine) evalOps(ops []types.Op) (uint64, bool) {
	var st []uint64
	pop := func() uint64 { v := st[len(st)-1]; st = st[:len(st)-1]; return v }
	for i := 0; i < len(ops); i++ {
		o := ops[i]
		switch o.Code {
		case types.OpReg:
			st = append(st, m.reg(o.Reg))
		case types.OpEntry:
			st = append(st, m.entryReg(o.Reg))
		case types.OpCFA:
			st = append(st, m.cfa)
		case types.OpAddr, types.OpConst:
			st = append(st, uint64(o.Value))
		case types.OpDeref:
			st = append(st, m.mem(pop(), o.Value))
		case types.OpZext, types.OpSext:
			v, sh := pop(), uint(64-8*o.Value)
			if o.Code == types.OpZext {
				st = append(st, v<<sh>>sh)
			} else {
				st = append(st, uint64(int64(v<<sh)>>sh))
			}
		case types.OpNeg:
			st = append(st, -pop())
		case types.OpNot:
			st = append(st, ^pop())
		case types.OpAbs:
			v := int64(pop())
			if v < 0 {
				v = -v
			}
			st = append(st, uint64(v))
		case types.OpDup:
			st = append(st, st[len(st)-1])
		case types.OpDrop:
			pop()
		case types.OpOver:
			st = append(st, st[len(st)-2])
		case types.OpPick:
			st = append(st, st[len(st)-1-int(o.Value)])
		case types.OpSwap:
			n := len(st)
			st[n-1], st[n-2] = st[n-2], st[n-1]
		case types.OpRot:
			n := len(st)
			st[n-1], st[n-2], st[n-3] = st[n-2], st[n-3], st[n-1]
		case types.OpSkip:
			i += int(o.Value)
		case types.OpBra:
			if pop() != 0 {
				i += int(o.Value)
			}
		case types.OpParam, types.OpFail:
			return 0, false
		default:
			b, a := pop(), pop()
			v, ok := binop(o.Code, a, b)
			if !ok {
				return 0, false
			}
			st = append(st, v)
		}
	}
	return st[len(st)-1], true
}

func binop(c types.OpCode, a, b uint64) (uint64, bool) {
	bo := func(x bool) uint64 {
		if x {
			return 1
		}
		return 0
	}
	switch c {
	case types.OpPlus:
		return a + b, true
	case types.OpMinus:
		return a - b, true
	case types.OpMul:
		return a * b, true
	case types.OpDiv:
		if b == 0 {
			return 0, false
		}
		return uint64(int64(a) / int64(b)), true
	case types.OpDivU:
		if b == 0 {
			return 0, false
		}
		return a / b, true
	case types.OpMod:
		if b == 0 {
			return 0, false
		}
		return a % b, true
	case types.OpModS:
		if b == 0 {
			return 0, false
		}
		return uint64(int64(a) % int64(b)), true
	case types.OpAnd:
		return a & b, true
	case types.OpOr:
		return a | b, true
	case types.OpXor:
		return a ^ b, true
	case types.OpShl:
		if b >= 64 {
			return 0, true
		}
		return a << b, true
	case types.OpShr:
		if b >= 64 {
			return 0, true
		}
		return a >> b, true
	case types.OpShra:
		if b >= 64 {
			b = 63
		}
		return uint64(int64(a) >> b), true
	case types.OpEq:
		return bo(a == b), true
	case types.OpNe:
		return bo(a != b), true
	case types.OpLt:
		return bo(int64(a) < int64(b)), true
	case types.OpGt:
		return bo(int64(a) > int64(b)), true
	case types.OpLe:
		return bo(int64(a) <= int64(b)), true
	case types.OpGe:
		return bo(int64(a) >= int64(b)), true
	case types.OpLtU:
		return bo(a < b), true
	case types.OpGtU:
		return bo(a > b), true
	case types.OpLeU:
		return bo(a <= b), true
	case types.OpGeU:
		return bo(a >= b), true
	}
	return 0, false
}

// evalPiece is what one decoded piece evaluates to.
func (m *machine) evalPiece(p types.Piece) (result, bool) {
	switch p.Kind {
	case types.LocReg:
		return result{v: m.reg(p.Reg), size: p.Size}, true
	case types.LocMem:
		return result{addr: true, v: m.reg(p.Reg) + uint64(p.Offset), size: p.Size}, true
	case types.LocCFA:
		return result{addr: true, v: m.cfa + uint64(p.Offset), size: p.Size}, true
	case types.LocAddr:
		return result{addr: true, v: uint64(p.Offset), size: p.Size}, true
	case types.LocConst:
		return result{v: uint64(p.Offset), size: p.Size}, true
	case types.LocEntry:
		return result{v: m.entryReg(p.Reg), size: p.Size}, true
	case types.LocValue, types.LocAt:
		v, ok := m.evalOps(p.Ops)
		return result{addr: p.Kind == types.LocAt, v: v, size: p.Size}, ok
	}
	return result{}, false
}

// TestExprOracle decodes every location expression of variables and
// parameters in real programs (glibc and Python built by Debian with GCC
// -O2, and Python's -O0 debug build) and checks, on random registers,
// entry values, frame address and memory, that each piece evaluates to what
// llvm-dwarfdump's spelling of the same expression evaluates to, by a second
// evaluator written from the DWARF standard. It counts the expressions the
// package evaluates beyond the simple forms (LocValue and LocAt pieces:
// arithmetic, dereferences, conversions), which probes could not read
// before, and requires a minimum of each.
func TestExprOracle(t *testing.T) {
	for _, c := range []struct {
		name                string
		minCompared, minNew int
	}{
		{"libc", 100000, 10000},
		{"python3.11d", 200000, 10000},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := testutil.RealBinary(t, c.name)
			f, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := llvmLocations(t, testutil.DebugFile(path))
			compared, fresh, rejected, unknown, bad, missing := 0, 0, 0, 0, 0, 0
			missed := map[string]int{}
			check := func(key string, u *unitCtx, expr, frameBase []byte) {
				d, ok := want[key]
				if !ok {
					missing++
					return
				}
				loc := f.decodeLoc(u, expr, frameBase)
				if len(loc.Pieces) == 1 && loc.Pieces[0].Kind == types.LocExpr && loc.Pieces[0].Expr != "optimized out" {
					rejected++
					m := &machine{regs: map[string]uint64{}, entry: map[string]uint64{}, cfa: rand.Uint64()}
					if _, ok := m.evalText(d.text, d.frameBase); ok {
						_, why, _ := strings.Cut(loc.Pieces[0].Expr, ": ")
						missed[why]++
					}
					return
				}
				for trial := 0; trial < 2; trial++ {
					m := &machine{regs: map[string]uint64{}, entry: map[string]uint64{}, cfa: rand.Uint64()}
					ref, ok := m.evalText(d.text, d.frameBase)
					if !ok {
						unknown++
						return
					}
					if len(ref) != len(loc.Pieces) {
						bad++
						t.Errorf("%s: %q: %d pieces, decoded %d (%s)", key, d.text, len(ref), len(loc.Pieces), loc)
						return
					}
					for i, p := range loc.Pieces {
						if p.Vector || p.Kind == types.LocExpr {
							continue // optimised out, or a register only named
						}
						got, ok := m.evalPiece(p)
						if !ok {
							continue // a division by zero, a parameter reference
						}
						if ref[i].size != p.Size || got.addr != ref[i].addr || got.v != ref[i].v {
							bad++
							if bad < 20 {
								t.Errorf("%s: %q piece %d: llvm %+v, decoded %s gives %+v", key, d.text, i, ref[i], loc, got)
							}
							return
						}
					}
				}
				compared++
				for _, p := range loc.Pieces {
					if p.Kind == types.LocValue || p.Kind == types.LocAt {
						fresh++
						break
					}
				}
			}
			r := f.oracle().Reader()
			var u *unitCtx
			var frameBases [][]byte
			for {
				re, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if re == nil {
					break
				}
				e := f.fromReader(re)
				if e.Tag == 0 {
					if len(frameBases) > 0 {
						frameBases = frameBases[:len(frameBases)-1]
					}
					continue
				}
				if e.Tag == TagCompileUnit || e.Tag == TagPartialUnit {
					u, frameBases = f.newUnitCtx(e), nil
				}
				var fb []byte
				if len(frameBases) > 0 {
					fb = frameBases[len(frameBases)-1]
				}
				if e.Tag == TagVariable || e.Tag == TagFormalParameter {
					if la, ok := readLocAttr(e, AttrLocation); ok {
						key := fmt.Sprintf("%08x", e.Offset)
						if !la.list {
							check(key, u, la.expr, fb)
						} else {
							seen := map[string]bool{}
							for _, le := range f.locList(u, la) {
								k := listKey(seen, fmt.Sprintf("%s %x %x", key, le.Lo, le.Hi))
								seen[k] = true
								check(k, u, le.Expr, fb)
							}
						}
					}
				}
				if e.Children {
					if e.Tag == TagSubprogram {
						if la, ok := readLocAttr(e, AttrFrameBase); ok && !la.list {
							fb = la.expr
						}
					}
					frameBases = append(frameBases, fb)
				}
			}
			t.Logf("%s: %d expressions agree with llvm-dwarfdump's (%d beyond the simple forms), %d not evaluated here, %d not by the oracle, %d not in the dump", c.name, compared, fresh, rejected, unknown, missing)
			for why, n := range missed {
				t.Logf("not evaluated here, by the oracle: %d: %s", n, why)
			}
			if compared < c.minCompared || fresh < c.minNew {
				t.Errorf("compared %d (want at least %d), %d beyond the simple forms (want at least %d)", compared, c.minCompared, fresh, c.minNew)
			}
		})
	}
}
