// Package line reads DWARF line tables (.debug_line, DWARF 2 to 5) as
// rows of the neutral model (types.Line): a check of the line program's
// header that debug/dwarf needs before it reads one (CheckHeader), and a
// unit's rows in address order with the address ranges its sequences
// cover (Read). It holds no state; the caller keeps a unit's Table.
package line

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/binscope/binscope/internal/leb128"
)

var errHeader = errors.New("line program header truncated")

// CheckHeader checks the DWARF 5 directory and file tables of the line
// program header at off in b (.debug_line): each entry has fields, and the
// count fits in the header. debug/dwarf reads as many entries as a header
// claims, even when its bytes run out or its entries have no fields, so a
// corrupt count of 2^32 costs it minutes and gigabytes. Earlier versions
// end their tables with a terminator, which debug/dwarf finds within the
// bytes; they pass, as does an offset outside b (debug/dwarf says so
// itself).
func CheckHeader(b []byte, off int64, order binary.ByteOrder) error {
	if off < 0 || off >= int64(len(b)) {
		return nil // debug/dwarf says so itself
	}
	r := lineBuf{b: b[off:], order: order}
	offSize := 4
	length := uint64(r.u32())
	if length == 0xffffffff {
		offSize = 8
		length = r.u64()
	}
	if r.err != nil || length > uint64(len(r.b)) {
		return nil
	}
	r.b = r.b[:length]
	version := r.u16()
	if version != 5 {
		return nil
	}
	r.skip(2) // address_size, segment_selector_size
	hlen := r.offset(offSize)
	if r.err != nil || hlen > uint64(len(r.b)) {
		return errHeader
	}
	r.b = r.b[:hlen]
	r.skip(4) // minimum_instruction_length, maximum_operations_per_instruction, default_is_stmt, line_base
	r.skip(1) // line_range
	opcodeBase := r.u8()
	if opcodeBase > 0 {
		r.skip(int(opcodeBase) - 1)
	}
	for _, table := range []string{"directory", "file name"} {
		nformats := int(r.u8())
		forms := make([]uint64, 0, nformats)
		for range nformats {
			r.uleb() // content type
			forms = append(forms, r.uleb())
		}
		count := r.uleb()
		if r.err != nil {
			return errHeader
		}
		if count > 0 && nformats == 0 {
			return fmt.Errorf("%d %s entries without fields", count, table)
		}
		if count > uint64(len(r.b)) {
			return fmt.Errorf("%d %s entries in a header of %d bytes", count, table, hlen)
		}
		for range count {
			for _, form := range forms {
				if err := r.field(form, offSize); err != nil {
					return fmt.Errorf("%s entry: %v", table, err)
				}
			}
		}
		if r.err != nil {
			return errHeader
		}
	}
	return nil
}

// lineBuf reads a line program header; reads past its end set err.
type lineBuf struct {
	b     []byte
	order binary.ByteOrder
	err   error
}

func (r *lineBuf) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errHeader
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *lineBuf) skip(n int) { r.take(n) }

func (r *lineBuf) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *lineBuf) u16() uint16 {
	if b := r.take(2); b != nil {
		return r.order.Uint16(b)
	}
	return 0
}

func (r *lineBuf) u32() uint32 {
	if b := r.take(4); b != nil {
		return r.order.Uint32(b)
	}
	return 0
}

func (r *lineBuf) u64() uint64 {
	if b := r.take(8); b != nil {
		return r.order.Uint64(b)
	}
	return 0
}

func (r *lineBuf) offset(size int) uint64 {
	if size == 8 {
		return r.u64()
	}
	return uint64(r.u32())
}

func (r *lineBuf) uleb() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := leb128.Uint(r.b)
	if n == 0 {
		r.err = errHeader
		return 0
	}
	r.b = r.b[n:]
	return v
}

// field skips one field of the given form.
func (r *lineBuf) field(form uint64, offSize int) error {
	switch form {
	case 0x08: // DW_FORM_string
		for r.err == nil && r.u8() != 0 {
		}
	case 0x0e, 0x17, 0x1f: // strp, sec_offset, line_strp
		r.skip(offSize)
	case 0x0f, 0x0d, 0x1a: // udata, sdata, strx
		r.uleb()
	case 0x0b, 0x25: // data1, strx1
		r.skip(1)
	case 0x05, 0x26: // data2, strx2
		r.skip(2)
	case 0x27: // strx3
		r.skip(3)
	case 0x06, 0x28: // data4, strx4
		r.skip(4)
	case 0x07: // data8
		r.skip(8)
	case 0x1e: // data16
		r.skip(16)
	case 0x09: // block
		r.skip(int(min(r.uleb(), 1<<31)))
	case 0x0a: // block1
		r.skip(int(r.u8()))
	default:
		return fmt.Errorf("form %#x", form)
	}
	return r.err
}
