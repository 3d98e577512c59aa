package dwarf

import (
	"fmt"

	"github.com/binscope/binscope/types"
)

// CallSite is a call the debug info describes (DW_TAG_call_site, GCC's
// DW_TAG_GNU_call_site): where it returns to and what it passed, as the
// caller could recompute it. GCC describes so the arguments of a clone it
// removed the parameter from (DW_OP_GNU_parameter_ref in the clone names
// the parameter), and the values a callee later reads as
// DW_OP_entry_value.
type CallSite struct {
	// ReturnPC is the address after the call instruction (the return
	// address the call pushes).
	ReturnPC uint64
	// Tail marks a tail call (a jump): no return address names it.
	Tail   bool
	Params []CallParam
}

// CallParam is one argument of a CallSite.
type CallParam struct {
	// Reg is the register the argument is passed in (its DW_AT_location),
	// "" for a parameter the callee does not receive (a removed one).
	Reg string
	// Param is the offset of the formal parameter's entry it is for
	// (DW_AT_call_parameter), 0 when not given.
	Param uint64
	// Value is the argument's value (DW_AT_call_value) in the caller at
	// the call: a LocValue, LocConst or LocReg piece; registers, memory
	// and the frame (DW_OP_fbreg, DW_OP_call_frame_cfa) are the caller's.
	Value types.Loc
}

// The call site tags and attributes, in DWARF 5's and GCC's DWARF 4 spellings.
const (
	tagCallSite         Tag  = 0x48
	tagCallSiteParam    Tag  = 0x49
	tagGNUCallSite      Tag  = 0x4109
	tagGNUCallSiteParam Tag  = 0x410a
	attrCallReturnPC    Attr = 0x7d
	attrCallValue       Attr = 0x7e
	attrCallParameter   Attr = 0x80
	attrCallTailCall    Attr = 0x82
	attrGNUCallValue    Attr = 0x2111
	attrGNUTailCall     Attr = 0x2115
)

// CallSites returns the call sites of the compile unit holding pc (read
// once per unit), in DIE order.
func (f *File) CallSites(pc uint64) (sites []CallSite, err error) {
	r := f.dieReader()
	cu, err := r.SeekPC(pc)
	if err != nil {
		return nil, fmt.Errorf("%s: section .debug_info: no compile unit covers %#x", f.Path, pc)
	}
	f.cacheMu.Lock()
	cached, ok := f.callSites[cu.Offset]
	f.cacheMu.Unlock()
	if ok {
		return cached, nil
	}
	u := f.newUnitCtx(cu)
	var (
		frameBases [][]byte // the frame base of each enclosing entry
		site       = -1     // the call site being read, in sites
	)
	fb := func() []byte {
		if len(frameBases) == 0 {
			return nil
		}
		return frameBases[len(frameBases)-1]
	}
	for n := 0; cu.Children; n++ {
		e, err := f.unitNext(r, n, len(frameBases))
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			if len(frameBases) == 0 {
				break
			}
			frameBases = frameBases[:len(frameBases)-1]
			continue
		}
		switch e.Tag {
		case tagCallSite, tagGNUCallSite:
			var cs CallSite
			if v, ok := e.Uint(attrCallReturnPC); ok {
				cs.ReturnPC = v
			} else if v, ok := e.Uint(AttrLowpc); ok {
				cs.ReturnPC = v // GCC's DWARF 4: the return address
			}
			cs.Tail = e.Has(attrCallTailCall) || e.Has(attrGNUTailCall)
			sites = append(sites, cs)
			site = len(sites) - 1
		case tagCallSiteParam, tagGNUCallSiteParam:
			if site < 0 {
				break
			}
			var p CallParam
			if la, ok := readLocAttr(e, AttrLocation); ok && !la.list {
				if l := f.decodeLoc(u, la.expr, nil); len(l.Pieces) == 1 && l.Pieces[0].Kind == types.LocReg {
					p.Reg = l.Pieces[0].Reg
				}
			}
			if o, ok := e.Ref(attrCallParameter); ok {
				p.Param = uint64(o)
			} else if o, ok := e.Ref(AttrAbstractOrigin); ok {
				p.Param = uint64(o)
			}
			v, ok := e.Bytes(attrCallValue)
			if !ok {
				v, ok = e.Bytes(attrGNUCallValue)
			}
			if ok && len(v) > 0 {
				// A DWARF expression whose result is the value: read
				// it as one that ends in DW_OP_stack_value.
				p.Value = f.decodeLoc(u, append(append([]byte(nil), v...), 0x9f), fb())
			}
			sites[site].Params = append(sites[site].Params, p)
		}
		if !e.Children {
			continue
		}
		base := fb()
		if e.Tag == TagSubprogram {
			if la, ok := readLocAttr(e, AttrFrameBase); ok && !la.list {
				base = la.expr
			}
		}
		frameBases = append(frameBases, base)
	}
	f.cacheMu.Lock()
	if f.callSites == nil {
		f.callSites = map[Offset][]CallSite{}
	}
	f.callSites[cu.Offset] = sites
	f.cacheMu.Unlock()
	return sites, nil
}

// unitNext is the next entry of the compile unit r walks (the n-th read,
// at nesting depth), or nil at the unit's end; a tree too deep or too
// long for a compiler's is an error.
func (f *File) unitNext(r *dieReader, n, depth int) (*Entry, error) {
	if n > 1<<24 || depth > maxNesting {
		return nil, f.infoError(noOffset, errEndless)
	}
	e, err := r.Next()
	if err != nil {
		return nil, f.infoError(noOffset, err)
	}
	if e == nil || e.Tag == TagCompileUnit || e.Tag == TagPartialUnit {
		return nil, nil
	}
	return e, nil
}
