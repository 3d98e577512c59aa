package line

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path"
	"strings"

	"github.com/binscope/binscope/internal/leb128"
)

// DecodeError is a line program that cannot be read: what is wrong, and
// where, as an offset in Section.
type DecodeError struct {
	Section string // ".debug_line", or the string section a path points into
	Offset  int64
	Err     string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("section %s at offset %#x: %s", e.Section, e.Offset, e.Err)
}

// buf reads a line program's bytes b from position i: off is the offset
// of b[0] in .debug_line. A read past the end sets err and returns zero;
// each read after it does too.
type buf struct {
	b     []byte
	i     int
	off   int64
	order binary.ByteOrder
	err   error
}

func (r *buf) fail(at int, format string, args ...any) {
	if r.err == nil {
		r.err = &DecodeError{Section: ".debug_line", Offset: r.off + int64(at), Err: fmt.Sprintf(format, args...)}
	}
	r.i = len(r.b)
}

func (r *buf) take(n int) []byte {
	if n < 0 || n > len(r.b)-r.i {
		r.fail(r.i, "%d bytes past the end of the line program", n-(len(r.b)-r.i))
		return nil
	}
	out := r.b[r.i : r.i+n]
	r.i += n
	return out
}

func (r *buf) u8() uint8 {
	if r.i >= len(r.b) {
		r.fail(r.i, "truncated")
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *buf) u16() uint16 {
	if b := r.take(2); b != nil {
		return r.order.Uint16(b)
	}
	return 0
}

func (r *buf) u24() uint32 {
	if b := r.take(3); b != nil {
		if r.order == binary.BigEndian {
			return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
		}
		return uint32(b[2])<<16 | uint32(b[1])<<8 | uint32(b[0])
	}
	return 0
}

func (r *buf) u32() uint32 {
	if b := r.take(4); b != nil {
		return r.order.Uint32(b)
	}
	return 0
}

func (r *buf) u64() uint64 {
	if b := r.take(8); b != nil {
		return r.order.Uint64(b)
	}
	return 0
}

// offset reads a section offset of the unit's format: 8 bytes in
// 64-bit DWARF, else 4.
func (r *buf) offset(dwarf64 bool) uint64 {
	if dwarf64 {
		return r.u64()
	}
	return uint64(r.u32())
}

// uleb reads an unsigned LEB128 number; bits past the 64th are dropped.
func (r *buf) uleb() uint64 {
	if r.i < len(r.b) && r.b[r.i] < 0x80 {
		c := r.b[r.i]
		r.i++
		return uint64(c)
	}
	v, n := leb128.Uint(r.b[min(r.i, len(r.b)):])
	if n == 0 {
		r.fail(r.i, "truncated LEB128 number")
		return 0
	}
	r.i += n
	return v
}

// sleb reads a signed LEB128 number.
func (r *buf) sleb() int64 {
	v, n := leb128.Int(r.b[min(r.i, len(r.b)):])
	if n == 0 {
		r.fail(r.i, "truncated LEB128 number")
		return 0
	}
	r.i += n
	return v
}

// cstring reads a NUL-terminated string.
func (r *buf) cstring() string {
	rest := r.b[min(r.i, len(r.b)):]
	n := bytes.IndexByte(rest, 0)
	if n < 0 {
		r.fail(r.i, "unterminated string")
		return ""
	}
	s := string(rest[:n])
	r.i += n + 1
	return s
}

// stringAt is the NUL-terminated string at off in sec (.debug_str or
// .debug_line_str); ok is false when off is outside sec or the string
// does not end in it.
func stringAt(sec []byte, off uint64) (string, bool) {
	if off >= uint64(len(sec)) {
		return "", false
	}
	rest := sec[off:]
	n := bytes.IndexByte(rest, 0)
	if n < 0 {
		return "", false
	}
	return string(rest[:n]), true
}

// isAbs reports whether p is absolute in Unix's or DOS's spelling: the
// host that wrote the DWARF is not known.
func isAbs(p string) bool {
	_, p = splitDrive(p)
	return len(p) > 0 && (p[0] == '/' || p[0] == '\\')
}

// join joins directory dir and a file name as debug/dwarf's LineFile
// names do: path.Join for Unix paths; for DOS ones, the drive kept and
// a separator added as dir spells it.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	drive, dir := splitDrive(dir)
	if drive == "" {
		return path.Join(dir, name)
	}
	drive2, name := splitDrive(name)
	if drive2 != "" && !strings.EqualFold(drive, drive2) {
		return drive2 + name // another drive: the directory does not apply
	}
	if dir != "" && !strings.HasSuffix(dir, "/") && !strings.HasSuffix(dir, `\`) {
		if strings.HasPrefix(dir, "/") {
			dir += "/"
		} else {
			dir += `\`
		}
	}
	return drive + dir + name
}

// splitDrive splits p into a DOS drive ("C:") or UNC share
// (`\\host\share`) and the rest; drive is "" for a Unix path.
func splitDrive(p string) (drive, rest string) {
	if len(p) >= 2 && p[1] == ':' {
		if c := p[0] | 0x20; 'a' <= c && c <= 'z' {
			return p[:2], p[2:]
		}
	}
	if len(p) > 3 && (p[0] == '\\' || p[0] == '/') && (p[1] == '\\' || p[1] == '/') {
		n := strings.ReplaceAll(p, "/", `\`)
		host := strings.IndexByte(n[2:], '\\') + 2
		if host > 2 {
			share := strings.IndexByte(n[host+1:], '\\') + host + 1
			if share > host {
				return p[:share], p[share:]
			}
		}
	}
	return "", p
}
