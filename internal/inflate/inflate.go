// Package inflate reads zlib streams (RFC 1950 around RFC 1951's deflate),
// the compression of ELF sections (SHF_COMPRESSED, .zdebug), straight into
// the buffer that holds the output: a back-reference copies from the bytes
// already there, so no window is kept and nothing is copied twice, and the
// caller can read each prefix as it is written (a large file's .debug_info
// inflates on one core while the other reads it). Read gives the same
// stream as an io.Reader, through a window, for output nothing holds whole.
//
// Its speed comes from libdeflate's ways: a 64-bit bit buffer refilled
// eight bytes at a time, one table lookup for most codes, and copies of
// eight bytes at a time. compress/flate stays the tests' oracle. Kept for
// speed: `bash bench/before.sh main REV 7 C-AgentTimeoutCB-cold`
// (ceph-osd) with klauspost's zlib reader in elfx's place in REV: 1.44
// times the CPU time (7 of 7 pairs); with debug/elf's reader in REV,
// `GOMAXPROCS=1 bash bench/before.sh main REV 21 funct-glibc-cold`: 1.29
// (15 of 21).
package inflate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
)

// Errors of a corrupt stream; each is wrapped with where it was met.
var (
	ErrCorrupt = errors.New("corrupt zlib stream")
	// ErrLong: the stream holds more than the output's room.
	ErrLong = errors.New("zlib stream longer than its stated size")
)

// Decoder state between calls.
const (
	stHeader = iota
	stStored
	stHuff
	stTrailer
	stDone
)

// chunk is how much compressed input a Reader reads at a time.
const chunk = 256 << 10

// A Reader inflates one zlib stream.
type Reader struct {
	src      io.ReaderAt
	srcAt    int64 // the next input byte to read from src
	srcEnd   int64
	in       []byte // input read, not yet loaded into bits from pos on
	pos      int
	virt     int // zero bytes loaded past the input's end
	bits     uint64
	nbits    uint
	state    int
	final    bool
	stored   int // bytes left of a stored block
	pendLen  int // bytes left of a copy the output's end cut
	pendDist int
	lit      *[litSize]uint32
	dist     *[distSize]uint32
	dynLit   [litSize]uint32
	dynDist  [distSize]uint32
	sum      hash.Hash32
	err      error
	// win, rd and at serve Read: output inflated into win up to at,
	// read up to rd.
	win    []byte
	rd, at int
}

// NewReader starts inflating the zlib stream of n bytes at off in src.
func NewReader(src io.ReaderAt, off, n int64) (*Reader, error) {
	z := &Reader{src: src, srcAt: off, srcEnd: off + n, in: make([]byte, 0, chunk), sum: adler32.New()}
	var h [2]byte
	if n < 2 {
		return nil, fmt.Errorf("zlib header: %w", io.ErrUnexpectedEOF)
	}
	if _, err := src.ReadAt(h[:], off); err != nil {
		return nil, fmt.Errorf("zlib header: %v", err)
	}
	switch {
	case h[0]&0x0f != 8 || h[0]>>4 > 7 || (uint(h[0])<<8|uint(h[1]))%31 != 0:
		return nil, fmt.Errorf("zlib header %#x %#x: %w", h[0], h[1], ErrCorrupt)
	case h[1]&0x20 != 0:
		return nil, fmt.Errorf("zlib header: a preset dictionary: %w", ErrCorrupt)
	}
	z.srcAt += 2
	return z, nil
}

// Done reports whether the stream ended, its checksum checked.
func (z *Reader) Done() bool { return z.state == stDone }

// more reads more input behind what is left of z.in; false at the end.
func (z *Reader) more() bool {
	if z.srcAt >= z.srcEnd || z.err != nil {
		return false
	}
	n := copy(z.in[:cap(z.in)], z.in[z.pos:])
	z.in, z.pos = z.in[:n], 0
	k := int(min(int64(cap(z.in)-n), z.srcEnd-z.srcAt))
	got, err := z.src.ReadAt(z.in[n:n+k], z.srcAt)
	z.in = z.in[:n+got]
	z.srcAt += int64(got)
	if got < k {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		z.err = err
	}
	return got > 0
}

// need makes z.bits hold at least n bits, loading them a byte at a time;
// past the input's end, zero bytes, which short reports once consumed.
func (z *Reader) need(n uint) {
	for z.nbits < n {
		if z.pos >= len(z.in) && !z.more() {
			z.virt++
			z.nbits += 8
			continue
		}
		z.bits |= uint64(z.in[z.pos]) << z.nbits
		z.pos++
		z.nbits += 8
	}
}

// drop consumes n bits.
func (z *Reader) drop(n uint) {
	z.bits >>= n
	z.nbits -= n
}

// short reports whether the bits consumed ran past the input's end.
func (z *Reader) short() bool { return uint(z.virt)*8 > z.nbits }

func (z *Reader) fail(err error) error {
	if z.err == nil {
		z.err = err
	}
	return z.err
}

// Into inflates into out from out[at:], the bytes before at being the
// output so far (at least its last 32 KB: what a back-reference reads),
// until at least want bytes are there, the output is full, or the stream
// ends; it returns the new end. Output past want is the rest of the last
// symbol (at most 258 bytes more, a stored block's up to 64 KB); past the
// returned end, out may hold anything. An error stays: every later call
// returns it.
func (z *Reader) Into(out []byte, at, want int) (int, error) {
	start := at
	var err error
	for z.err == nil && z.state != stDone && (at < want || at == len(out)) {
		before := at
		switch z.state {
		case stHeader:
			err = z.header()
		case stStored:
			at, err = z.copyStored(out, at)
		case stHuff:
			if z.pendLen > 0 {
				at = z.pending(out, at)
			} else {
				at, err = z.huff(out, at, want)
			}
		case stTrailer:
			z.sum.Write(out[start:at])
			start = at
			err = z.trailer()
		}
		if err != nil {
			z.fail(err)
			break
		}
		if at == len(out) && at == before && z.state != stHeader && z.state != stTrailer && z.state != stDone {
			break // output full: the caller makes room, or the stream is too long
		}
	}
	z.sum.Write(out[start:at])
	if z.err != nil {
		return at, z.err
	}
	return at, nil
}

// header reads a block's header, or the stream's end after the last block.
func (z *Reader) header() error {
	if z.final {
		z.state = stTrailer
		return nil
	}
	z.need(3)
	z.final = z.bits&1 == 1
	typ := z.bits >> 1 & 3
	z.drop(3)
	switch typ {
	case 0:
		z.drop(z.nbits & 7)
		z.need(32)
		n, nn := z.bits&0xffff, z.bits>>16&0xffff
		z.drop(32)
		if n != ^nn&0xffff {
			return fmt.Errorf("stored block length %#x, its complement %#x: %w", n, nn, ErrCorrupt)
		}
		z.stored, z.state = int(n), stStored
	case 1:
		z.lit, z.dist, z.state = &fixedLit, &fixedDist, stHuff
	case 2:
		if err := z.dynamic(); err != nil {
			return err
		}
		z.lit, z.dist, z.state = &z.dynLit, &z.dynDist, stHuff
	default:
		return fmt.Errorf("block type 3: %w", ErrCorrupt)
	}
	if z.short() {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// clenOrder is the order of the code length code's lengths.
var clenOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamic reads a dynamic block's codes into z.dynLit and z.dynDist.
func (z *Reader) dynamic() error {
	z.need(14)
	nlit, ndist, nclen := int(z.bits&31)+257, int(z.bits>>5&31)+1, int(z.bits>>10&15)+4
	z.drop(14)
	if nlit > 286 || ndist > 30 {
		return fmt.Errorf("%d literal/length and %d distance codes: %w", nlit, ndist, ErrCorrupt)
	}
	var clens [19]uint8
	for _, s := range clenOrder[:nclen] {
		z.need(3)
		clens[s] = uint8(z.bits & 7)
		z.drop(3)
	}
	var clen [1 << clenBits]uint32
	if err := build(clen[:], clenBits, clens[:], clenSyms[:]); err != nil {
		return fmt.Errorf("code length code: %w: %w", err, ErrCorrupt)
	}
	var lens [286 + 30]uint8
	for i := 0; i < nlit+ndist; {
		z.need(clenBits + 7)
		e := clen[z.bits&(1<<clenBits-1)]
		if e&kindMask == kindBad {
			return fmt.Errorf("code lengths: a code no symbol has: %w", ErrCorrupt)
		}
		z.drop(uint(e & 31))
		sym := e >> 16
		var rep int
		var val uint8
		switch {
		case sym < 16:
			lens[i] = uint8(sym)
			i++
			continue
		case sym == 16:
			if i == 0 {
				return fmt.Errorf("code lengths: a repeat of none: %w", ErrCorrupt)
			}
			rep, val = 3+int(z.bits&3), lens[i-1]
			z.drop(2)
		case sym == 17:
			rep = 3 + int(z.bits&7)
			z.drop(3)
		default:
			rep = 11 + int(z.bits&127)
			z.drop(7)
		}
		if i+rep > nlit+ndist {
			return fmt.Errorf("code lengths: a repeat past the last: %w", ErrCorrupt)
		}
		for ; rep > 0; rep-- {
			lens[i] = val
			i++
		}
	}
	if lens[256] == 0 {
		return fmt.Errorf("no end-of-block code: %w", ErrCorrupt)
	}
	if err := build(z.dynLit[:], litBits, lens[:nlit], litSyms[:]); err != nil {
		return fmt.Errorf("literal/length code: %w: %w", err, ErrCorrupt)
	}
	if err := build(z.dynDist[:], distBits, lens[nlit:nlit+ndist], distSyms[:]); err != nil {
		return fmt.Errorf("distance code: %w: %w", err, ErrCorrupt)
	}
	return nil
}

// copyStored copies what it can of a stored block into out[at:].
func (z *Reader) copyStored(out []byte, at int) (int, error) {
	// Whole bytes left in the bit buffer first (the header left it at a
	// byte's boundary).
	for z.stored > 0 && at < len(out) && z.nbits >= 8 {
		out[at] = byte(z.bits)
		z.drop(8)
		at++
		z.stored--
	}
	if z.nbits == 0 {
		z.bits = 0 // the bytes read ahead are read from z.in below
	}
	for z.stored > 0 && at < len(out) {
		if z.pos >= len(z.in) && !z.more() {
			return at, io.ErrUnexpectedEOF
		}
		n := copy(out[at:min(len(out), at+z.stored)], z.in[z.pos:])
		z.pos += n
		at += n
		z.stored -= n
	}
	if z.short() {
		return at, io.ErrUnexpectedEOF
	}
	if z.stored == 0 {
		z.state = stHeader
	}
	return at, nil
}

// pending goes on with a copy the output's end cut.
func (z *Reader) pending(out []byte, at int) int {
	n := min(z.pendLen, len(out)-at)
	for i := range n {
		out[at+i] = out[at+i-z.pendDist]
	}
	z.pendLen -= n
	return at + n
}

// trailer checks the stream's Adler-32 checksum, after the last block.
func (z *Reader) trailer() error {
	z.drop(z.nbits & 7)
	z.need(32)
	b := uint32(z.bits)
	z.drop(32)
	if z.short() {
		return io.ErrUnexpectedEOF
	}
	want := b>>24 | b>>8&0xff00 | b<<8&0xff0000 | b<<24
	if got := z.sum.Sum32(); got != want {
		return fmt.Errorf("checksum %#08x, the stream says %#08x: %w", got, want, ErrCorrupt)
	}
	z.state = stDone
	return nil
}

// Read reads the inflated stream, through a window.
func (z *Reader) Read(p []byte) (int, error) {
	const keep, room = 32 << 10, 1 << 20
	for z.rd == z.at {
		if z.state == stDone {
			return 0, io.EOF
		}
		if z.err != nil {
			return 0, z.err
		}
		if z.win == nil {
			z.win = make([]byte, keep+room)
		}
		if z.at > len(z.win)-64<<10 {
			n := copy(z.win, z.win[z.at-keep:z.at])
			z.rd, z.at = n, n
		}
		at, err := z.Into(z.win, z.at, len(z.win))
		z.at = at
		if err != nil && z.rd == z.at {
			return 0, err
		}
	}
	n := copy(p, z.win[z.rd:z.at])
	z.rd += n
	return n, nil
}

var le = binary.LittleEndian
