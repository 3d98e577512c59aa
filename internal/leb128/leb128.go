// Package leb128 decodes and encodes DWARF's LEB128 numbers, for every reader of the
// project (line program headers, location lists and expressions, call
// frame information).
package leb128

// Uint decodes the unsigned LEB128 number at the start of b and returns it
// with the number of bytes it takes. Bits past the 64th are dropped; n is 0
// when b ends before the number does.
func Uint(b []byte) (v uint64, n int) {
	var shift uint
	for i, c := range b {
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// Int decodes the signed LEB128 number at the start of b, as Uint does.
func Int(b []byte) (v int64, n int) {
	var shift uint
	for i, c := range b {
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1
		}
	}
	return 0, 0
}

// AppendUint appends v to b as an unsigned LEB128 number.
func AppendUint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// AppendInt appends v to b as a signed LEB128 number.
func AppendInt(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
