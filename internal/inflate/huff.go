package inflate

import (
	"fmt"
	"io"
)

// huff decodes a Huffman block's symbols into out[at:] until at reaches
// want, the block ends, or out is full. Far from the input's and the
// output's ends the fast loop runs, unchecked but for the stream's own
// errors; near them, symbol by symbol with every bound checked.
func (z *Reader) huff(out []byte, at, want int) (int, error) {
	for z.state == stHuff && (at < want || at == len(out)) {
		if z.pos+16 > len(z.in) {
			z.more()
		}
		if z.pos+16 <= len(z.in) && at+fastRoom <= len(out) {
			var err error
			if at, err = z.fast(out, at, want); err != nil {
				return at, err
			}
			continue
		}
		var err error
		var stop bool
		if at, stop, err = z.slow(out, at); err != nil || stop {
			return at, err
		}
	}
	return at, nil
}

// fastRoom is the output room the fast loop needs for a symbol: the
// longest copy and the eight bytes it may write past its end.
const fastRoom = 258 + 8

// fast decodes symbols while at least 8 bytes of input and fastRoom
// bytes of output are left, and at is below want.
func (z *Reader) fast(out []byte, at, want int) (int, error) {
	bits, nbits, pos, in := z.bits, z.nbits, z.pos, z.in
	lit, dist := z.lit, z.dist
	inEnd, outEnd := len(in)-8, len(out)-fastRoom
	var err error
	for at < want && at <= outEnd && pos <= inEnd {
		// Refill to 56 bits or more; the bits above nbits are the
		// stream's next ones, which a later refill ORs in again.
		bits |= le.Uint64(in[pos:]) << nbits
		pos += int(63-nbits) >> 3
		nbits |= 56
		// At most 15+5+15+13 bits follow.
		e := lit[bits&(1<<litBits-1)]
		if e&kindMask == kindSub {
			bits >>= e & 31
			nbits -= uint(e & 31)
			e = lit[(e>>16+uint32(bits)&(1<<(e>>8&31)-1))&(litSize-1)]
		}
		bits >>= e & 31
		nbits -= uint(e & 31)
		if e&kindMask == kindLit {
			out[at] = byte(e >> 16)
			at++
			continue
		}
		if e&kindMask != kindLen {
			if e&kindMask == kindEnd {
				z.state = stHeader
			} else {
				err = fmt.Errorf("a literal/length code no symbol has: %w", ErrCorrupt)
			}
			break
		}
		extra := e >> 8 & 31
		length := int(e>>16) + int(bits&(1<<extra-1))
		bits >>= extra
		nbits -= uint(extra)
		d := dist[bits&(1<<distBits-1)]
		if d&kindMask == kindSub {
			bits >>= d & 31
			nbits -= uint(d & 31)
			d = dist[(d>>16+uint32(bits)&(1<<(d>>8&31)-1))&(distSize-1)]
		}
		bits >>= d & 31
		nbits -= uint(d & 31)
		if d&kindMask != kindLen {
			err = fmt.Errorf("a distance code no symbol has: %w", ErrCorrupt)
			break
		}
		extra = d >> 8 & 31
		distance := int(d>>16) + int(bits&(1<<extra-1))
		bits >>= extra
		nbits -= uint(extra)
		if distance > at {
			err = fmt.Errorf("a distance of %d after %d bytes: %w", distance, at, ErrCorrupt)
			break
		}
		copyMatch(out, at, distance, length)
		at += length
	}
	z.bits, z.nbits, z.pos = bits, nbits, pos
	return at, err
}

// copyMatch copies length bytes from distance back to out[at:], writing
// up to 8 bytes more, which later output overwrites.
func copyMatch(out []byte, at, distance, length int) {
	src := at - distance
	switch {
	case distance >= 8:
		for i := 0; i < length; i += 8 {
			le.PutUint64(out[at+i:], le.Uint64(out[src+i:]))
		}
	case distance == 1:
		b := out[src]
		for i := range length {
			out[at+i] = b
		}
	default:
		for i := range length {
			out[at+i] = out[src+i]
		}
	}
}

// slow decodes one symbol into out[at:], checking every bound; stop when
// the symbol ended the block, or out is full (a literal or a copy is
// then left unread; a copy the end cuts goes on in pending).
func (z *Reader) slow(out []byte, at int) (int, bool, error) {
	z.need(48)
	bits, nbits := z.bits, z.nbits
	take := func(n uint32) uint32 {
		v := uint32(bits) & (1<<n - 1)
		bits >>= n
		nbits -= uint(n)
		return v
	}
	e := z.lit[bits&(1<<litBits-1)]
	if e&kindMask == kindSub {
		take(e & 31)
		e = z.lit[(e>>16+uint32(bits)&(1<<(e>>8&31)-1))&(litSize-1)]
	}
	take(e & 31)
	if at == len(out) && (e&kindMask == kindLit || e&kindMask == kindLen) {
		return at, true, nil // no room: left unread
	}
	switch e & kindMask {
	case kindLit:
		out[at] = byte(e >> 16)
		at++
	case kindEnd:
		z.state = stHeader
	case kindLen:
		length := int(e>>16) + int(take(e>>8&31))
		d := z.dist[bits&(1<<distBits-1)]
		if d&kindMask == kindSub {
			take(d & 31)
			d = z.dist[(d>>16+uint32(bits)&(1<<(d>>8&31)-1))&(distSize-1)]
		}
		take(d & 31)
		if d&kindMask != kindLen {
			return at, true, fmt.Errorf("a distance code no symbol has: %w", ErrCorrupt)
		}
		distance := int(d>>16) + int(take(d>>8&31))
		if distance > at {
			return at, true, fmt.Errorf("a distance of %d after %d bytes: %w", distance, at, ErrCorrupt)
		}
		n := min(length, len(out)-at)
		for i := range n {
			out[at+i] = out[at+i-distance]
		}
		at += n
		z.pendLen, z.pendDist = length-n, distance
	default:
		return at, true, fmt.Errorf("a literal/length code no symbol has: %w", ErrCorrupt)
	}
	z.bits, z.nbits = bits, nbits
	if z.short() {
		return at, true, io.ErrUnexpectedEOF
	}
	return at, z.state != stHuff || z.pendLen > 0, nil
}
